#!/bin/bash
# Reward 1 when /app/dedupe.py matches the reference on the sample and on freshly generated inputs.
mkdir -p /logs/verifier
if [ -f /app/dedupe.py ] && timeout 50 python3 /tests/check_dedupe.py; then
  echo 1 >/logs/verifier/reward.txt
else
  echo 0 >/logs/verifier/reward.txt
fi
exit 0
