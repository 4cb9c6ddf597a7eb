#!/usr/bin/python3
"""scripts/bench/budget_table.py's grouping rules on made-up cells: a replicate's "_runN" names
its setting, hosts of one CPU name are cut into speed classes (from the fastest down, a new
class under the class's fastest / 1.25), cells without a measured speed keeping the name alone,
auto's expected steps are counted in the cell's own batches, a cell at another cell's steps
stands in that cell's block, and a block's summary row compares
auto with the inherited recipe and the best other setting (a replicated setting by its mean)."""

import json
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

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


class StepsOf(unittest.TestCase):
    """A cell run at another cell's steps (budget_grid.sh --steps-of) on a slower host stands in
    that cell's block, on its host, and says where it ran."""

    def write_cell(self, root, setting, bleu, gflops, steps_of_gflops=None):
        cell = root / "budget_minangnlp_min_id_30min" / setting
        cell.mkdir(parents=True)
        entry = {"bleu": bleu, "chrf": 80.0, "checkpoint": f"c/{setting}/averaged.pt",
                 "step": 7227, "direction": "min-id", "test_set": "test"}
        vocab = 3500 if setting == "auto" else 4000
        config = {"data": {"vocab_size": vocab, "normalization": "nmt_nfkc", "batch_tokens": 2048},
                  "train": {"name": setting, "label_smoothing": 0.2, "lr": 0.0015, "warmup": 800},
                  "model": {"d_model": 256, "encoder_layers": 3, "decoder_layers": 3,
                            "dropout": 0.3 if steps_of_gflops else 0.15}}
        for name, value in (("results.json", [entry]), ("config.json", config),
                            ("host.json", {"cpu": "AMD EPYC", "fp32_gflops": gflops})):
            (cell / name).write_text(json.dumps(value))
        if steps_of_gflops:
            source_host = {"cpu": "AMD EPYC", "fp32_gflops": steps_of_gflops}
            (cell / "steps_of.json").write_text(json.dumps(
                {"cell": "inherited", "steps": 7227, "host": source_host}))

    def test_it_joins_the_block_of_the_cell_it_took_the_steps_of(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            self.write_cell(root, "auto", 77.91, 250.0)
            self.write_cell(root, "inherited", 77.70, 246.0)
            self.write_cell(root, "drop030", 78.00, 190.0, steps_of_gflops=246.0)
            with mock.patch.object(budget_table, "RESULTS", root):
                rows, summary = budget_table.tables()
        self.assertIn("| EPYC 246-250 (inherited's 7,227 steps, run on EPYC at 190) | drop030 |",
                      rows)
        blocks = summary.splitlines()[2:]
        self.assertEqual(blocks, ["| minangnlp_min_id | 30 min | EPYC 246-250 | 77.91 | 77.70 | "
                                  "+0.21 | drop030 78.00 | -0.09 |"])


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
