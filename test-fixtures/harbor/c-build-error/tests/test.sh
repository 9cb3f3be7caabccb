#!/bin/bash
# Builds a copy of /app from source (prebuilt objects and binary removed, so only a fixed build passes), then
# runs the binary on inputs the agent never saw and compares its output line.
mkdir -p /logs/verifier
work=$(mktemp -d)
verdict() {
  echo "$1" >/logs/verifier/reward.txt
  rm -rf "$work"
  exit 0
}
cp -a /app/. "$work/" || verdict 0
rm -f "$work/stats" "$work"/src/*.o
timeout 30 make -C "$work" || verdict 0
[ -x "$work/stats" ] || verdict 0
for input in /tests/cases/*.in; do
  got=$(timeout 5 "$work/stats" <"$input")
  want=$(cat "${input%.in}.out")
  if [ "$got" != "$want" ]; then
    echo "FAIL on $(basename "$input"): got '$got', want '$want'"
    verdict 0
  fi
done
verdict 1
