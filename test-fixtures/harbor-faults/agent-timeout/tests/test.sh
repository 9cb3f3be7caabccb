#!/bin/bash
# Reward 1 when the solution's marker file exists.
mkdir -p /logs/verifier
if [ "$(cat /app/done.txt 2>/dev/null)" = done ]; then echo 1; else echo 0; fi >/logs/verifier/reward.txt
exit 0
