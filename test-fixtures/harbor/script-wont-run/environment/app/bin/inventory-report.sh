#!/bin/bash
# inventory-report.sh FILE: one line per service listed in FILE (lines "name host port"; blank lines and
# "#" comments are skipped), sorted by name, then the number of services and of distinct hosts.
set -eu
source report-lib.sh
file=${1:?usage: inventory-report.sh FILE}
count=0
hosts=""
while read -r name host port; do
  case $name in '' | '#'*) continue ;; esac
  service_line "$name" "$host" "$port"
  count=$((count + 1))
  hosts+="$host"$'\n'
done < <(LC_ALL=C sort "$file")
echo "$count services on $(printf '%s' "$hosts" | LC_ALL=C sort -u | grep -c .) hosts"
