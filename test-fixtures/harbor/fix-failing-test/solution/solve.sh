#!/bin/bash
# Reorder at the point itself, discount from the threshold on, round halves up in integer arithmetic.
set -e
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path("inventory.py")
s = p.read_text()
s = s.replace("return item.on_hand < item.reorder_point", "return item.on_hand <= item.reorder_point")
s = s.replace("""    if item.reorder_qty > BULK_QTY:
        cost = cost * (100 - BULK_DISCOUNT_PCT) / 100
    return int(cost)""", """    if item.reorder_qty >= BULK_QTY:
        return (cost * (100 - BULK_DISCOUNT_PCT) + 50) // 100
    return cost""")
p.write_text(s)
PY
python3 -m unittest -q
