#!/bin/bash
# Reward 1 when the inbox and the library hold exactly the expected files with their original contents.
mkdir -p /logs/verifier
if timeout 30 python3 /tests/check_library.py; then
  echo 1 >/logs/verifier/reward.txt
else
  echo 0 >/logs/verifier/reward.txt
fi
exit 0
