#!/bin/bash
# Runs the visible tests, which must be unchanged (their SHA-256 is pinned here), and hidden ones from /tests
# against /app/inventory.py. Reward 1 only when every test passes.
mkdir -p /logs/verifier
work=$(mktemp -d)
cp /tests/test_inventory_hidden.py "$work/"
if [ "$(sha256sum </app/test_inventory.py | cut -d' ' -f1)" = 5faeebf15fe4d56149f2d25a18bfd34ff6a4c77a9b2ba6fc75b00f6dd3d6b7fa ] && cp /app/test_inventory.py "$work/" &&
  (cd "$work" && PYTHONPATH=/app PYTHONDONTWRITEBYTECODE=1 timeout 30 python3 -m unittest -v test_inventory test_inventory_hidden); then
  echo 1 >/logs/verifier/reward.txt
else
  echo 0 >/logs/verifier/reward.txt
fi
rm -rf "$work"
exit 0
