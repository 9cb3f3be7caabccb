#!/bin/bash
# Compares /app/report.csv with the report computed in exact decimal arithmetic when the task was written.
# Trailing carriage returns and blank lines are forgiven; anything else must match.
mkdir -p /logs/verifier
if [ -f /app/report.csv ] && diff <(sed 's/\r$//' /app/report.csv | sed '/^[[:space:]]*$/d') /tests/expected-report.csv; then
  echo 1 >/logs/verifier/reward.txt
else
  echo 0 >/logs/verifier/reward.txt
fi
exit 0
