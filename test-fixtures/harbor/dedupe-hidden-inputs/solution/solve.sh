#!/bin/bash
# Parse each line as CSV only to read its email; write the line itself, so quoting is kept byte for byte.
set -euo pipefail
cat >/app/dedupe.py <<'PY'
import csv
import sys

lines = sys.stdin.read().splitlines(keepends=True)
seen = set()
sys.stdout.write("".join(lines[:1]))
for line in lines[1:]:
    row = next(csv.reader([line]))
    email = row[1].strip().lower() if len(row) > 1 else ""
    if email and email in seen:
        continue
    seen.add(email)
    sys.stdout.write(line)
PY
python3 /app/dedupe.py </app/sample-in.csv | diff - /app/sample-out.csv
