"""Stock levels and reorder decisions for a small warehouse."""

from dataclasses import dataclass

BULK_QTY = 100
BULK_DISCOUNT_PCT = 5


@dataclass
class Item:
    sku: str
    on_hand: int
    reorder_point: int
    reorder_qty: int
    unit_cost_cents: int


def needs_reorder(item: Item) -> bool:
    """An item is reordered when its stock is at or below its reorder point."""
    return item.on_hand < item.reorder_point


def line_cost_cents(item: Item) -> int:
    """The cost of one reorder line in cents.

    Lines of BULK_QTY units or more get BULK_DISCOUNT_PCT percent off. The result is
    rounded to the nearest cent, halves rounded up.
    """
    cost = item.reorder_qty * item.unit_cost_cents
    if item.reorder_qty > BULK_QTY:
        cost = cost * (100 - BULK_DISCOUNT_PCT) / 100
    return int(cost)


def purchase_order(items: list[Item]) -> list[tuple[str, int, int]]:
    """(sku, quantity, cost in cents) for every item that needs a reorder, by sku."""
    lines = [(i.sku, i.reorder_qty, line_cost_cents(i)) for i in items if needs_reorder(i)]
    return sorted(lines)


def order_total_cents(items: list[Item]) -> int:
    """The total of the purchase order in cents."""
    return sum(cost for _, _, cost in purchase_order(items))
