#!/bin/bash
# Runs /app/prune-backups.sh on fresh directories built here (other names, dates and counts than /app/backups)
# and compares what is left with what its header promises.
mkdir -p /logs/verifier
work=$(mktemp -d)
verdict() {
  echo "$1" >/logs/verifier/reward.txt
  rm -rf "$work"
  exit 0
}
# case NAME KEEP EXPECTED-LEFT FILES...: KEEP empty means the default.
case_() {
  local name=$1 keep=$2 want=$3 dir="$work/$1"
  shift 3
  mkdir -p "$dir"
  for f in "$@"; do touch -d 2026-01-01T00:00:00 "$dir/$f"; done
  if [ -n "$keep" ]; then
    timeout 10 bash /app/prune-backups.sh "$dir" "$keep" || { echo "FAIL $name: exit status"; verdict 0; }
  else
    timeout 10 bash /app/prune-backups.sh "$dir" || { echo "FAIL $name: exit status"; verdict 0; }
  fi
  local got
  got=$(cd "$dir" && ls -1A | LC_ALL=C sort | paste -sd'|')
  [ "$got" = "$want" ] || { echo "FAIL $name: left '$got', want '$want'"; verdict 0; }
}
[ -f /app/prune-backups.sh ] || verdict 0
case_ keep-three 3 "app_2026-03-09.tar.gz|my files_2026-03-07.tar.gz|notes.txt|site_2026-03-08.tar.gz|x_2025-01-01.tar.gz.part" \
  "app_2026-03-09.tar.gz" "my files_2026-03-07.tar.gz" "site_2026-03-08.tar.gz" "my files_2026-03-01.tar.gz" \
  "app_2026-02-28.tar.gz" "site_2025-12-31.tar.gz" "old stuff_2024-06-30.tar.gz" notes.txt x_2025-01-01.tar.gz.part
case_ keep-more-than-there 10 "a b_2026-01-02.tar.gz|a_2026-01-01.tar.gz|c_2026-01-03.tar.gz" \
  "a_2026-01-01.tar.gz" "a b_2026-01-02.tar.gz" "c_2026-01-03.tar.gz"
case_ keep-one 1 "two  spaces_2026-05-05.tar.gz" \
  "two  spaces_2026-05-05.tar.gz" "two  spaces_2026-05-04.tar.gz" "one space_2026-05-03.tar.gz" "z_2026-04-30.tar.gz"
case_ default-five "" "b_2026-07-02.tar.gz|b_2026-07-03.tar.gz|b_2026-07-04.tar.gz|b_2026-07-05.tar.gz|b_2026-07-06.tar.gz" \
  b_2026-07-01.tar.gz b_2026-07-02.tar.gz b_2026-07-03.tar.gz b_2026-07-04.tar.gz b_2026-07-05.tar.gz b_2026-07-06.tar.gz
case_ exactly-keep 2 "k_2026-02-01.tar.gz|k_2026-02-02.tar.gz" k_2026-02-01.tar.gz k_2026-02-02.tar.gz
verdict 1
