"""Builds the shop database of the task. A small LCG makes the data the same under every Python version; the
planted customers at the end would win under the usual mistakes (refunds counted, the wrong year boundaries)."""
import sqlite3
import sys

state = 424242


def rnd(n):
    global state
    state = (state * 1103515245 + 12345) % 2**31
    return state % n


db = sqlite3.connect(sys.argv[1])
db.executescript(
    """
    CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, country TEXT NOT NULL);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                         placed_at TEXT NOT NULL, status TEXT NOT NULL);
    CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), sku TEXT NOT NULL,
                              quantity INTEGER NOT NULL, unit_price_cents INTEGER NOT NULL);
    """
)
countries = ["DE", "FR", "NL", "BE", "AT", "IT"]
for c in range(1, 201):
    db.execute("INSERT INTO customers VALUES (?, ?, ?)", (c, f"customer{c:03d}@shop.example", countries[rnd(6)]))
order_id = 0


def order(customer, placed_at, status, items):
    global order_id
    order_id += 1
    db.execute("INSERT INTO orders VALUES (?, ?, ?, ?)", (order_id, customer, placed_at, status))
    for sku, qty, cents in items:
        db.execute("INSERT INTO order_items VALUES (?, ?, ?, ?)", (order_id, sku, qty, cents))


statuses = ["paid"] * 6 + ["refunded", "pending"]
for _ in range(1500):
    year = [2024, 2025, 2025, 2026][rnd(4)]
    when = f"{year}-{rnd(12) + 1:02d}-{rnd(28) + 1:02d} {rnd(24):02d}:{rnd(60):02d}:{rnd(60):02d}"
    items = [(f"SKU-{rnd(50):02d}", rnd(3) + 1, 199 + rnd(4000)) for _ in range(rnd(3) + 1)]
    order(rnd(200) + 1, when, statuses[rnd(8)], items)

db.execute("INSERT INTO customers VALUES (201, 'lena.winter@shop.example', 'DE')")
db.execute("INSERT INTO customers VALUES (202, 'omar.refund@shop.example', 'FR')")
db.execute("INSERT INTO customers VALUES (203, 'nye.party@shop.example', 'NL')")
order(201, "2025-05-17 10:12:00", "paid", [("SKU-90", 2, 45000), ("SKU-91", 1, 12345)])
order(201, "2025-12-31 18:40:00", "paid", [("SKU-92", 3, 30000)])
order(202, "2025-02-11 09:00:00", "paid", [("SKU-90", 1, 45000)])
order(202, "2025-03-01 09:30:00", "refunded", [("SKU-93", 1, 299900)])
order(203, "2024-12-31 23:59:59", "paid", [("SKU-94", 2, 60000)])
order(203, "2025-07-07 07:07:07", "paid", [("SKU-90", 1, 45000)])
order(203, "2026-01-01 00:00:00", "paid", [("SKU-94", 2, 60000)])
db.commit()
