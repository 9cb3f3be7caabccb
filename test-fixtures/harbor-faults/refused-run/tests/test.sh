#!/bin/bash
# Reward 1 when the file holds jq's version, which only exists if the RUN step's install happened.
mkdir -p /logs/verifier
if command -v jq >/dev/null && [ "$(cat /app/done.txt 2>/dev/null)" = "$(jq --version)" ]; then echo 1; else echo 0; fi >/logs/verifier/reward.txt
exit 0
