#!/bin/bash
# The pristine relayd from /tests must accept /app/config/relay.json (so editing the program in /app does not
# help), and the settings must be the ones the comments asked for.
mkdir -p /logs/verifier
cfg=/app/config/relay.json
if timeout 10 python3 /tests/relayd --check "$cfg" &&
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$cfg" /tests/expected.json; then
  echo 1 >/logs/verifier/reward.txt
else
  echo 0 >/logs/verifier/reward.txt
fi
exit 0
