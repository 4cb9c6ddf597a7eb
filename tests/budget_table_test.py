#!/usr/bin/python3
"""scripts/bench/budget_table.py's grouping rules on made-up cells: a replicate's "_runN" names
its setting, hosts of one CPU name are cut into speed classes (from the fastest down, a new
class under the class's fastest / 1.25), cells without a measured speed keeping the name alone,
auto's expected steps are counted in the cell's own batches, and a block's summary row compares
auto with the inherited recipe and the best other setting (a replicated setting by its mean)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "bench"))
import budget_table  # noqa: E402  scripts/bench/budget_table.py


def config(cpu, gflops=None):
    host = {"cpu": cpu}
    if gflops is not None:
        host["fp32_gflops"] = gflops
    return {"host": host}


class Base(unittest.TestCase):
    def test_a_replicate_names_its_setting(self):
        self.assertEqual(budget_table.base("inherited_run2"), "inherited")
        self.assertEqual(budget_table.base("drop000_ls01_b1024_run10"), "drop000_ls01_b1024")
        self.assertEqual(budget_table.base("auto"), "auto")
        self.assertEqual(budget_table.base("run2"), "run2")  # a name, not a replicate
        self.assertEqual(budget_table.base("auto_run2_v8000"), "auto_run2_v8000")


class LabelSpeeds(unittest.TestCase):
    def test_speeds_of_one_cpu_are_cut_into_classes(self):
        cells = [config("AMD EPYC", s) for s in (261.0, 180.0, 230.0, 209.0, 300.0)]
        cells += [config("AMD EPYC"), config("Intel(R) Xeon(R) Processor", 331.0)]
        budget_table.label_speeds(cells)
        labels = [budget_table.host(c) for c in cells]
        # 300 starts a class that takes speeds down to 240; 230 starts the next, down to 184.
        self.assertEqual(labels, ["EPYC 261-300", "EPYC 180-180", "EPYC 209-230", "EPYC 209-230",
                                  "EPYC 261-300", "EPYC", "Xeon 331-331"])

    def test_a_slower_host_leaves_the_faster_classes_as_they_were(self):
        faster = [config("AMD EPYC", s) for s in (212.0, 235.0, 250.0, 261.0)]
        budget_table.label_speeds(faster)
        before = [budget_table.host(c) for c in faster]
        cells = faster + [config("AMD EPYC", 198.0)]
        budget_table.label_speeds(cells)
        self.assertEqual([budget_table.host(c) for c in cells], before + ["EPYC 198-198"])
        self.assertEqual(before, ["EPYC 212-261"] * 4)


class EstimatedSteps(unittest.TestCase):
    def test_steps_of_2048_tokens_are_counted_in_the_cells_own_batches(self):
        why = "1,024: under 4,000 steps of 2,048 tokens; about 2,274 steps of 2,048 tokens"
        cell = {"auto": {"data.batch_tokens": {"why": why}}, "data": {"batch_tokens": 1024}}
        self.assertEqual(budget_table.estimated_steps(cell), " (est. 4,548)")
        cell["data"]["batch_tokens"] = 2048
        self.assertEqual(budget_table.estimated_steps(cell), " (est. 2,274)")
        self.assertEqual(budget_table.estimated_steps({"data": {"batch_tokens": 2048}}), "")


class SummaryRow(unittest.TestCase):
    def test_auto_is_compared_with_the_inherited_recipe_and_the_best_other_setting(self):
        runs = {"auto": [37.22, 37.40], "inherited": [37.40], "drop000": [36.0], "v8000": None}
        self.assertEqual(budget_table.summary_row("m30k", 10, "EPYC", runs),
                         "| m30k | 10 min | EPYC | 37.31 (mean of 37.22, 37.40) | 37.40 | -0.09 | "
                         "inherited 37.40 | -0.09 |")

    def test_a_block_of_auto_alone_has_no_best_setting(self):
        self.assertEqual(budget_table.summary_row("ja-en", 10, "EPYC", {"auto": [38.6]}),
                         "| ja-en | 10 min | EPYC | 38.60 | — | — | — | — |")
        self.assertEqual(budget_table.summary_row("lzh", 10, "EPYC", {"inherited": None}),
                         "| lzh | 10 min | EPYC | — | failed | — | — | — |")


if __name__ == "__main__":
    unittest.main()
