import unittest

from inventory import Item, line_cost_cents, needs_reorder, order_total_cents, purchase_order


class ReorderTest(unittest.TestCase):
    def test_below_reorder_point_is_reordered(self):
        self.assertTrue(needs_reorder(Item("A1", 3, 5, 20, 100)))

    def test_at_reorder_point_is_reordered(self):
        self.assertTrue(needs_reorder(Item("A1", 5, 5, 20, 100)))

    def test_above_reorder_point_is_not(self):
        self.assertFalse(needs_reorder(Item("A1", 6, 5, 20, 100)))


class CostTest(unittest.TestCase):
    def test_small_line_pays_full_price(self):
        self.assertEqual(line_cost_cents(Item("B2", 0, 1, 10, 250)), 2500)

    def test_bulk_line_of_exactly_the_threshold_is_discounted(self):
        self.assertEqual(line_cost_cents(Item("B2", 0, 1, 100, 333)), 31635)

    def test_discounted_cost_rounds_half_up(self):
        self.assertEqual(line_cost_cents(Item("B2", 0, 1, 110, 1)), 105)

    def test_order_lists_reordered_items_by_sku_with_total(self):
        items = [Item("C3", 9, 10, 10, 100), Item("A1", 10, 10, 100, 20), Item("B2", 11, 10, 5, 1)]
        self.assertEqual(purchase_order(items), [("A1", 100, 1900), ("C3", 10, 1000)])
        self.assertEqual(order_total_cents(items), 2900)


if __name__ == "__main__":
    unittest.main()
