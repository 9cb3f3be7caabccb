#!/bin/bash
# Fault: a verifier that crashes after writing a reward Harbor cannot parse.
mkdir -p /logs/verifier
echo abc >/logs/verifier/reward.txt
echo "verifier crashed" >&2
exit 1
