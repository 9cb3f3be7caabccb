# More cases of the same specification, unseen by the agent: a fix that only fits the visible tests fails here.
import unittest

from inventory import Item, line_cost_cents, needs_reorder, order_total_cents


class HiddenTest(unittest.TestCase):
    def test_zero_stock_at_zero_point_is_reordered(self):
        self.assertTrue(needs_reorder(Item("Z", 0, 0, 1, 1)))

    def test_just_under_the_threshold_pays_full_price(self):
        self.assertEqual(line_cost_cents(Item("Z", 0, 1, 99, 7)), 693)

    def test_other_halves_round_up(self):
        self.assertEqual(line_cost_cents(Item("Z", 0, 1, 150, 1)), 143)
        self.assertEqual(line_cost_cents(Item("Z", 0, 1, 130, 1)), 124)

    def test_exact_discounts_stay_exact(self):
        self.assertEqual(line_cost_cents(Item("Z", 0, 1, 200, 1000)), 190000)

    def test_total_of_nothing_to_reorder_is_zero(self):
        self.assertEqual(order_total_cents([Item("Z", 5, 1, 10, 10)]), 0)


if __name__ == "__main__":
    unittest.main()
