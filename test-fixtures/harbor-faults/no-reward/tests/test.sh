#!/bin/bash
# Fault: checks the work but never writes /logs/verifier/reward.txt or reward.json, so Harbor has no reward.
if [ "$(cat /app/done.txt 2>/dev/null)" = done ]; then echo "looks solved"; else echo "not solved"; fi
exit 0
