#!/bin/bash
# Builds the repository of the task: "Add --strict validation" is dropped by a hard reset and reachable only
# from the reflog, then two more commits land on main. Identity and dates are fixed, no git config is read.
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Ada Ops" GIT_AUTHOR_EMAIL="ada@example.com"
export GIT_COMMITTER_NAME="Ada Ops" GIT_COMMITTER_EMAIL="ada@example.com"
commit() {
  GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q -m "$2"
}
mkdir -p "$1"
cd "$1"
git init -q -b main .

cat >ledger.py <<'PY'
"""Imports bank statements into the household ledger."""
import sys


def parse_line(line):
    date, payee, amount = line.rstrip("\n").split(";")
    return date, payee, float(amount)


def main(argv):
    for line in open(argv[1]):
        print(*parse_line(line), sep="\t")


if __name__ == "__main__":
    main(sys.argv)
PY
printf '# ledger\n\nImports bank statements.\n' >README.md
git add -A && commit "2026-11-02T09:00:00Z" "Initial ledger"

sed -i 's/return date, payee, float(amount)/return date, payee, round(float(amount) * 100)/' ledger.py
git add -A && commit "2026-11-03T09:00:00Z" "Parse amounts as integer cents"

cat >ledger.py <<'PY'
"""Imports bank statements into the household ledger."""
import re
import sys

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_line(line):
    date, payee, amount = line.rstrip("\n").split(";")
    return date, payee, round(float(amount) * 100)


def check_strict(date, payee, cents):
    """--strict: refuse lines a bank export never contains."""
    if not DATE.match(date):
        raise ValueError(f"bad date {date!r}")
    if not payee.strip():
        raise ValueError("empty payee")
    if cents == 0:
        raise ValueError("zero amount")


def main(argv):
    strict = "--strict" in argv
    paths = [a for a in argv[1:] if a != "--strict"]
    for line in open(paths[0]):
        entry = parse_line(line)
        if strict:
            check_strict(*entry)
        print(*entry, sep="\t")


if __name__ == "__main__":
    main(sys.argv)
PY
git add -A && commit "2026-11-04T09:00:00Z" "Add --strict validation"
git reset -q --hard HEAD~1

printf '\nInput: one `date;payee;amount` line per transaction.\n' >>README.md
git add -A && commit "2026-11-05T09:00:00Z" "Document the import format"

printf '# Changes\n\n- Amounts are integer cents.\n' >CHANGELOG.md
git add -A && commit "2026-11-06T09:00:00Z" "Add a changelog"
