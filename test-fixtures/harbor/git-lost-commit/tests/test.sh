#!/bin/bash
# Checks /app/ledger: main checked out and clean, the recovered commit on it exactly once, the two later commits
# kept, and ledger.py as the lost commit left it. Bash and git only (the image has no python).
mkdir -p /logs/verifier
g() { git -c safe.directory='*' -C /app/ledger "$@"; }
fail() {
  echo "FAIL: $*"
  echo 0 >/logs/verifier/reward.txt
  exit 0
}
[ "$(g symbolic-ref -q HEAD)" = refs/heads/main ] || fail "main is not checked out"
[ -z "$(g status --porcelain)" ] || fail "the working tree is not clean"
subjects=$(g log --format=%s main) || fail "no main branch"
for s in "Initial ledger" "Parse amounts as integer cents" "Document the import format" "Add a changelog"; do
  grep -qxF "$s" <<<"$subjects" || fail "commit '$s' is missing from main"
done
[ "$(grep -cxF "Add --strict validation" <<<"$subjects")" = 1 ] || fail "'Add --strict validation' is not on main once"
# The lost commit's ledger.py, by its SHA-256 (the verifier cannot see the environment's files).
[ "$(g show main:ledger.py | sha256sum | cut -d' ' -f1)" = 840bbfb7b04f2771bf1396d5201f5ee85f7850057396e7ccb78bfb2f3c7a9384 ] || fail "ledger.py differs from the lost commit's"
g show main:README.md | grep -q 'date;payee;amount' || fail "the README change was lost"
g show main:CHANGELOG.md | grep -q 'integer cents' || fail "the changelog was lost"
echo PASS
echo 1 >/logs/verifier/reward.txt
exit 0
