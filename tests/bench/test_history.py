"""bench/history.py: the step detector on series with known steps, and the page, summary and
spreads built from a directory of synthetic reports."""
import json
import math
import os
import random
import re
import subprocess
import sys
import unittest

from benchtest import BENCH_DIR, TempDirCase, case, report, run

sys.path.insert(0, BENCH_DIR)
import history  # noqa: E402  (bench/history.py)


def noisy(levels, sigma=0.002, seed=3):
    """log values: each (count, level) run of the series, with Gaussian noise of sigma."""
    rng = random.Random(seed)
    return [math.log(level) + rng.gauss(0, sigma) for count, level in levels for _ in range(count)]


class StepDetectorTest(unittest.TestCase):
    def test_one_step_is_found_where_it_is(self):
        self.assertEqual(history.segment(noisy([(12, 1.0), (9, 1.05)])), [12])

    def test_two_steps_both_ways(self):
        self.assertEqual(history.segment(noisy([(8, 1.0), (8, 0.9), (8, 0.95)])), [8, 16])

    def test_a_flat_noisy_series_has_no_step(self):
        for seed in range(20):
            self.assertEqual(history.segment(noisy([(25, 1.0)], sigma=0.005, seed=seed)), [], seed)

    def test_a_step_under_the_minimum_is_merged_away(self):
        # 1.5 % with almost no noise: the least squares would split it, MIN_STEP (3 %) does not.
        self.assertEqual(history.segment(noisy([(10, 1.0), (10, 1.015)], sigma=0.0005)), [])

    def test_one_outlier_is_not_a_step(self):
        values = noisy([(20, 1.0)])
        values[9] += math.log(1.2)
        self.assertEqual(len(history.segment(values)), 2)  # a segment of one run, in and out
        self.assertEqual(history.analyse(list(range(20)), values, "x")["levels"][-1][0], 10)


class HistoryBuildTest(TempDirCase):
    RUNS = 10

    def write_runs(self, device="Test GPU"):
        """RUNS nightly reports; case `stepped` 8 % slower from run 6 on (commit c6...), the
        copies drift +-3 % from night to night, which copy-relative series cancel."""
        directory = self.path("reports")
        os.makedirs(directory)
        rng = random.Random(5)
        for night in range(self.RUNS):
            drift = 1 + rng.uniform(-0.03, 0.03)
            jitter = lambda: 1 + rng.uniform(-0.002, 0.002)  # noqa: E731
            stepped = 1e-3 * drift * jitter() * (1.08 if night >= 6 else 1.0)
            document = report(case("stepped", strategy="auto", median=stepped, copy_median=0.8e-3 * drift),
                              case("flat", strategy="rows", median=1e-3 * drift * jitter(), copy_median=0.8e-3 * drift),
                              device=device)
            document["context"]["git_commit"] = f"c{night}" + "0" * 39
            document["context"]["date"] = f"2026-01-{night + 1:02d}T00:00:00Z"
            with open(os.path.join(directory, f"night-{night}.json"), "w") as f:
                json.dump(document, f)
        return directory

    def build(self, directory):
        outputs = {k: self.path(k) for k in ("page.html", "summary.md", "spread.json")}
        result = subprocess.run([sys.executable, os.path.join(BENCH_DIR, "history.py"), "build", directory,
                                 "--html", outputs["page.html"], "--summary", outputs["summary.md"],
                                 "--spread-out", outputs["spread.json"]], capture_output=True, text=True)
        return result, outputs

    def test_page_data_summary_and_spreads(self):
        result, outputs = self.build(self.write_runs())
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(outputs["page.html"]) as f:
            page = f.read()
        self.assertNotRegex(page, r"(src|href)=\"?https?:")  # offline: nothing fetched
        data = json.loads(re.search(r'<script type="application/json" id="history-data">(.*?)</script>',
                                    page, re.S).group(1))
        self.assertEqual([r["commit"][:2] for r in data["runs"]], [f"c{i}" for i in range(self.RUNS)])
        stepped = data["cases"]["sum/float32/stepped/axis0/packed/increasing/inclusive/auto"]
        self.assertEqual(stepped["points"], [6])
        (step,) = stepped["steps"]
        self.assertEqual(data["runs"][step["run"]]["commit"][:2], "c6")
        self.assertAlmostEqual(step["change"], 0.08, delta=0.005)
        self.assertAlmostEqual(stepped["since_best"], 0.08, delta=0.005)
        self.assertEqual(data["cases"]["sum/float32/flat/axis0/packed/increasing/inclusive/rows"]["points"], [])
        # The class series (its AUTO cases: `stepped`) steps there too.
        (class_step,) = data["classes"]["test"]["steps"]
        self.assertEqual(class_step["run"], 6)
        with open(outputs["summary.md"]) as f:
            summary = f.read()
        self.assertIn("| test | c600000 |", summary)
        self.assertRegex(summary, r"\| sum/float32/stepped/\S+ \| \+8\.\d% \| c000000 \| c600000 \|")
        self.assertEqual(summary, result.stdout)
        # The spreads are what compare --spread reads.
        with open(outputs["spread.json"]) as f:
            spreads = json.load(f)
        self.assertEqual(spreads["format"], "tscan-bench-spread")
        self.assertEqual(set(spreads["cases"]), set(data["cases"]))
        self.assertTrue(all(history.SPREAD_FLOOR <= v < 0.05 for v in spreads["cases"].values()), spreads)
        base = self.write_json("base.json", report(case("flat", median=1e-3)))
        compared = run(["compare", base, base, "--spread", outputs["spread.json"]])
        self.assertEqual(compared.returncode, 0, compared.stderr)
        self.assertIn("1 cases with a spread from history", compared.stdout)

    def test_reports_of_different_gpus_are_refused(self):
        directory = self.write_runs()
        other = report(case("flat", median=1e-3), device="Other GPU")
        with open(os.path.join(directory, "other.json"), "w") as f:
            json.dump(other, f)
        result, _ = self.build(directory)
        self.assertEqual(result.returncode, 2)
        self.assertIn("reports from different GPUs (Other GPU, Test GPU)", result.stderr)

    def test_a_file_that_is_not_a_report_exits_2_naming_it(self):
        directory = self.write_runs()
        with open(os.path.join(directory, "junk.json"), "w") as f:
            f.write('{"format": "something"}')
        result, _ = self.build(directory)
        self.assertEqual(result.returncode, 2)
        self.assertIn("junk.json: not a tscan-bench report", result.stderr)


if __name__ == "__main__":
    unittest.main()
