"""rollout_details from the ATIF export: each agent step's ids, and nothing from a step whose ids are malformed."""

import unittest
from typing import Any

from lar_harbor.agent import rollout_detail


def step(prompt: Any, completion: Any, logprobs: Any) -> dict[str, Any]:
    return {
        "source": "agent",
        "metrics": {"prompt_token_ids": prompt, "completion_token_ids": completion, "logprobs": logprobs},
    }


class RolloutDetailTest(unittest.TestCase):
    def test_each_turn_in_order(self) -> None:
        doc = {"steps": [{"source": "user"}, step([1, 2], [3], [-0.5]), step([1, 2, 3, 4], [5, 6], [0, -1])]}
        self.assertEqual(
            rollout_detail(doc),
            {
                "prompt_token_ids": [[1, 2], [1, 2, 3, 4]],
                "completion_token_ids": [[3], [5, 6]],
                "logprobs": [[-0.5], [0.0, -1.0]],
            },
        )

    def test_a_turn_without_good_ids_gives_none_rather_than_a_gap(self) -> None:
        good = step([1], [2], [-1])
        for bad in (
            step([1], [2, 3], [-1]),  # one logprob for two ids
            step(["1"], [2], [-1]),  # an id that is not an integer
            step([True], [2], [-1]),  # a boolean is not an id
            step([1], [2], "x"),
            {"source": "agent"},  # no metrics at all
        ):
            with self.subTest(bad=bad):
                self.assertIsNone(rollout_detail({"steps": [good, bad, good]}))
        self.assertIsNone(rollout_detail({"steps": "none"}))
        # Steps that are not the model's carry no ids and break nothing.
        self.assertIsNotNone(rollout_detail({"steps": [{"source": "user"}, "x", good]}))


if __name__ == "__main__":
    unittest.main()
