#!/bin/bash
# Match the name with a regular expression, let date(1) reject days the calendar does not have, then move.
set -euo pipefail
cd /app/inbox
re='^(IMG|VID|PXL)_([0-9]{4})([0-9]{2})([0-9]{2})_([0-9]{4})\.([A-Za-z0-9]+)$'
for f in *; do
  [[ -f $f && $f =~ $re ]] || continue
  prefix=${BASH_REMATCH[1]} y=${BASH_REMATCH[2]} m=${BASH_REMATCH[3]} d=${BASH_REMATCH[4]}
  seq=${BASH_REMATCH[5]} ext=${BASH_REMATCH[6]}
  [ "$(date -d "$y-$m-$d" +%Y%m%d 2>/dev/null)" = "$y$m$d" ] || continue
  mkdir -p "/app/library/$y/$m/$d"
  mv -n -- "$f" "/app/library/$y/$m/$d/${prefix,,}-$seq.${ext,,}"
done
