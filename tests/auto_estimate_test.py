#!/usr/bin/python3
"""scripts/bench/auto_estimate.py's reading of a cell, on made-up files: the epochs a run reached
from its steps and the steps of its epochs (it validates at each epoch's end and at the finish),
or from its throughput within its first epoch; the budget `auto` expected from its dropout
reason, with or without the share of the time validating takes; that share and its cost."""

import gzip
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "bench"))
import auto_estimate  # noqa: E402  scripts/bench/auto_estimate.py

HEAD = """2026-12-07 02:29:22  train: 1000 pairs read, 900 kept, 100 filtered (0 empty, 100 too long)
  tokens: source 12000, target 9100 (pieces, no eos)
"""


def cell(log):
    directory = Path(tempfile.mkdtemp(prefix="auto_estimate_test"))
    with gzip.open(directory / "train.log.gz", "wt", encoding="utf-8") as out:
        out.write(HEAD + log)
    return directory


class Reached(unittest.TestCase):
    def test_epochs_from_the_steps_of_an_epoch(self):
        log = ("x  valid step 100 | loss 2\nx  valid step 200 | loss 2\nx  valid step 250 | loss 2\n"
               "x  throughput: 5000 target tokens/s, 1 GFLOP/s of model matmuls\n")
        rate, epochs = auto_estimate.reached(cell(log), 10)
        self.assertEqual(rate, 5000)
        self.assertAlmostEqual(epochs, 2.5)  # not 5,000 x 600 s / 10,000 pieces = 300

    def test_within_the_first_epoch_from_the_throughput(self):
        log = ("x  valid step 70 | loss 2\n"
               "x  throughput: 10 target tokens/s, 1 GFLOP/s of model matmuls\n")
        _, epochs = auto_estimate.reached(cell(log), 1)
        self.assertAlmostEqual(epochs, 10 * 60 / (900 + 9100))  # an eos per pair kept


class Expected(unittest.TestCase):
    def test_the_budget_of_the_dropout_reason(self):
        auto = {"model.dropout": {"value": 0.1, "why": (
            "0.15 + 0.1 x log2(22.2 / 28 epochs) = 0.116, to 0.05s within [0, 0.3]; 22.2 epochs "
            "(about 10,995,703 target pieces (train.max_minutes 30 at about 6,109 target "
            "pieces/s), 22.2 epochs of 496,312)")},
            "train.label_smoothing": {"value": 0.2}, "data.batch_tokens": {"value": 2048}}
        self.assertEqual(auto_estimate.expected(auto), (6109, 22.2))
        self.assertEqual(auto_estimate.choices(auto), "0.1/0.2/2048")
        auto["model.dropout"]["why"] = auto["model.dropout"]["why"].replace(
            "6,109 target pieces/s)", "6,109 target pieces/s, less 9.9% validating)")
        self.assertEqual(auto_estimate.expected(auto), (6109, 22.2))
        auto["model.dropout"]["why"] = auto["model.dropout"]["why"].replace(
            "validating)", "validating and a validation before the first step)")
        self.assertEqual(auto_estimate.expected(auto), (6109, 22.2))


class Validating(unittest.TestCase):
    def test_share_and_cost_of_the_validations(self):
        log = HEAD.replace("train:", "dev:").replace("900 kept", "80 kept").replace(
            "target 9100", "target 920") + (
            "x  step 50 | epoch 1 | loss 5 | ppl 1 | lr 1e-4 | 5000 tgt tok/s | 10 s\n"
            "x  valid step 60 | loss 4 | ppl 2 | BLEU 1.00 | chrF 2.00 | 0.2 s | new best\n"
            "x  valid step 120 | loss 4 | ppl 2 | BLEU 1.00 | chrF 2.00 | 0.4 s\n"
            "x  step 150 | epoch 3 | loss 5 | ppl 1 | lr 1e-4 | 5000 tgt tok/s | 30 s\n"
            "x  throughput: 5000 target tokens/s, 1 GFLOP/s of model matmuls\n")
        share, cost = auto_estimate.validating(HEAD + log)
        self.assertAlmostEqual(share, 0.6 / 30)
        self.assertAlmostEqual(cost, 0.3 * 5000 / 1000)  # 920 pieces + 80 eos


if __name__ == "__main__":
    unittest.main()
