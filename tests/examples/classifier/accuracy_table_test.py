#!/usr/bin/python3
"""examples/classifier/accuracy_table.py on synthetic run folders: runs that differ only in --seed
share a row (seeds in order, their accuracies beside them, the time as a range), other options get
rows of their own in folder order, and a run without its options.txt or an empty folder is refused."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "classifier", "accuracy_table.py")


class AccuracyTable(unittest.TestCase):
    def folder(self, root, name, options, seed, accuracy, seconds):
        d = os.path.join(root, name)
        os.makedirs(d)
        with open(os.path.join(d, "options.txt"), "w") as f:
            f.write(options + "\n")
        with open(os.path.join(d, "metrics.json"), "w") as f:
            json.dump({"config": {"seed": seed, "threads": 1}, "test": {"accuracy": accuracy},
                       "train_seconds": seconds}, f)

    def run_script(self, root):
        return subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)

    def test_seeds_merge_and_options_keep_their_order(self):
        root = tempfile.mkdtemp()
        self.folder(root, "00", "", 0, 0.8908, 7.84)
        self.folder(root, "01", "--seed 2", 2, 0.8942, 8.10)
        self.folder(root, "02", "--seed 1", 1, 0.8946, 7.70)
        self.folder(root, "03", "--epochs 20 --dropout 0.1", 0, 0.8984, 18.2)
        self.folder(root, "04", "--epochs 20 --seed 1 --dropout 0.1", 1, 0.8990, 18.4)
        os.makedirs(os.path.join(root, "05"))  # an unfinished run: no metrics.json, skipped
        r = self.run_script(root)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l for l in r.stdout.splitlines() if l.startswith("| ") and not l.startswith("| options")]
        self.assertEqual(rows, [
            "| (defaults) | 0 / 1 / 2 | 89.08% / 89.46% / 89.42% | 8 s |",
            "| `--epochs 20 --dropout 0.1` | 0 / 1 | 89.84% / 89.90% | 18 s |",
        ])

    def test_a_time_spread_is_printed_as_a_range(self):
        root = tempfile.mkdtemp()
        self.folder(root, "00", "--epochs 20", 0, 0.8986, 15.2)
        self.folder(root, "01", "--epochs 20 --seed 1", 1, 0.8969, 17.4)
        out = self.run_script(root).stdout
        self.assertIn("| `--epochs 20` | 0 / 1 | 89.86% / 89.69% | 15-17 s |", out)

    def test_a_run_without_its_options_is_refused(self):
        root = tempfile.mkdtemp()
        self.folder(root, "00", "", 0, 0.8908, 7.84)
        os.remove(os.path.join(root, "00", "options.txt"))
        r = self.run_script(root)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no options.txt", r.stderr)

    def test_an_empty_folder_is_refused(self):
        r = self.run_script(tempfile.mkdtemp())
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no run folders with metrics.json", r.stderr)


if __name__ == "__main__":
    unittest.main()
