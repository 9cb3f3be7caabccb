#!/bin/bash
# Paid orders placed from 2025-01-01 00:00:00 up to, not including, 2026-01-01; sums in integer cents.
set -euo pipefail
python3 - <<'PY'
import sqlite3

db = sqlite3.connect("/app/shop.db")
email, cents = db.execute(
    """SELECT c.email, SUM(i.quantity * i.unit_price_cents) AS spent
       FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items i ON i.order_id = o.id
       WHERE o.status = 'paid' AND o.placed_at >= '2025-01-01' AND o.placed_at < '2026-01-01'
       GROUP BY c.id ORDER BY spent DESC LIMIT 1"""
).fetchone()
with open("/app/answer.txt", "w") as f:
    f.write(f"{email}\n{cents // 100}.{cents % 100:02d}\n")
PY
cat /app/answer.txt
