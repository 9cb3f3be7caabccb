#!/bin/bash
# The answer was computed from the deterministic database when the task was written; the database is built with
# customers who win under the usual mistakes (refunded orders counted, a year boundary off by a day).
mkdir -p /logs/verifier
expected=$'lena.winter@shop.example\n1923.45'
got=$(sed 's/\r$//; s/^[[:space:]]*//; s/[[:space:]]*$//' /app/answer.txt 2>/dev/null | sed '/^$/d')
if [ "$got" = "$expected" ]; then
  echo 1 >/logs/verifier/reward.txt
else
  printf 'got:\n%s\n' "$got"
  echo 0 >/logs/verifier/reward.txt
fi
exit 0
