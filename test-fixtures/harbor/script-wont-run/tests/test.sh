#!/bin/bash
# Invokes the script directly (so it must be executable with a working interpreter line) from a directory other
# than its own, on a services file the agent has not seen, and compares the report.
mkdir -p /logs/verifier
got=$(cd / && timeout 10 /app/bin/inventory-report.sh /tests/services-hidden.txt 2>&1)
if [ "$got" = "$(cat /tests/expected-hidden.txt)" ]; then
  echo 1 >/logs/verifier/reward.txt
else
  printf 'got:\n%s\n' "$got"
  echo 0 >/logs/verifier/reward.txt
fi
exit 0
