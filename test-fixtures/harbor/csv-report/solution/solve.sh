#!/bin/bash
# Sum per normalised region inside the quarter, then sort by revenue (descending) and name.
set -e
cd /app
{
  echo "region,revenue"
  awk -F, 'NR > 1 && NF >= 6 && $2 >= "2026-01-01" && $2 <= "2026-03-31" {
      region = tolower($3); gsub(/^[ \t]+|[ \t]+$/, "", region); total[region] += $5 * $6
    }
    END { for (region in total) printf "%s,%.2f\n", region, total[region] }' sales.csv |
    sort -t, -k2,2nr -k1,1
} >report.csv
