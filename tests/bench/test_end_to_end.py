"""The driver end to end where CUDA sees no device: the reference backend's default sweep, the
table and the report, a wrong answer caught, and compare on the results."""
import json
import os
import unittest

from benchtest import TempDirCase, no_gpu_env, run, schema_errors


class EndToEndTest(TempDirCase):
    def test_default_sweep_without_a_gpu(self):
        result = run([], env=no_gpu_env(), cwd=self.path(""))
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertIn("no CUDA device", result.stderr)
        self.assertIn("running the reference backend", result.stderr)
        report_path = self.path("tscan-bench.json")  # the default --output
        self.assertIn(f"report written to tscan-bench.json", result.stderr)
        with open(report_path) as f:
            report = json.load(f)
        self.assertEqual(schema_errors(report), [])
        self.assertEqual(report["context"]["backend"], "reference")
        self.assertIn("no CUDA device", report["context"]["gpu_unavailable_reason"])
        benchmarks = report["benchmarks"]
        self.assertEqual({b["status"] for b in benchmarks}, {"passed"})
        # The classes, the ladder, both operators, every direction/exclusive form, several dtypes.
        classes = {b["class"] for b in benchmarks}
        self.assertTrue({"1d", "square_rows", "square_cols", "middle_axis", "8d", "transposed", "padded",
                         "ladder"} <= classes, classes)
        self.assertEqual({b["op"] for b in benchmarks}, {"sum", "prod"})
        self.assertEqual({(b["direction"], b["exclusive"]) for b in benchmarks},
                         {("increasing", False), ("increasing", True), ("decreasing", False), ("decreasing", True)})
        self.assertLessEqual({"float32", "float16", "int32"}, {b["dtype"] for b in benchmarks})
        # The table: a header and one row per case, each marked ok; then, after a blank line,
        # the distribution.
        lines, distribution = result.stdout.split("\n\n", 1)
        lines = lines.splitlines()
        self.assertIn("reference's % of copy over", distribution)
        self.assertTrue(lines[0].startswith("case"))
        self.assertEqual(len(lines) - 1, len(benchmarks))
        self.assertTrue(all(line.endswith(" ok") for line in lines[1:]))

        # A report compared with itself is all SAME, exit 0.
        same = run(["compare", report_path, report_path])
        self.assertEqual(same.returncode, 0, same.stderr)
        self.assertIn(f"{len(benchmarks)} SAME, 0 FAST, 0 SLOW, 0 AMBIGUOUS, 0 NEW, 0 GONE", same.stdout)

    def test_cases_too_slow_to_time_are_skipped(self):
        report_path = self.path("slow.json")
        # 2^24 elements: estimated from a run on 1/64 of the tensor; 2^20: from the checked run.
        result = run(["--backend", "reference", "--shape", "16777216", "--shape", "1048576", "--dtype", "float32",
                      "--op", "sum", "--direction", "both", "--exclusive", "no", "--time-limit", "0.0005",
                      "--min-samples", "2", "--output", report_path])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(report_path) as f:
            report = json.load(f)
        self.assertEqual(schema_errors(report), [])
        cases = {(b["elements"], b["direction"]): b for b in report["benchmarks"]}
        self.assertEqual({b["status"] for b in cases.values()}, {"skipped"})
        estimated = cases[(1 << 24, "increasing")]
        self.assertIn("from a run on 1/64 of the tensor", estimated["skip_reason"])
        self.assertFalse(estimated["checked"])
        measured = cases[(1 << 20, "increasing")]
        self.assertIn("for one run (checked: right)", measured["skip_reason"])
        self.assertTrue(measured["checked"])
        self.assertTrue(measured["check"]["passed"])
        self.assertNotIn("time", measured)
        # The later case of the same shape and strategy is skipped without running, and says so:
        # the check it quotes is the earlier case's.
        later = cases[(1 << 20, "decreasing")]
        self.assertTrue(later["skip_reason"].startswith("not run, nor checked: an earlier case of this shape"))
        self.assertTrue(later["skip_reason"].endswith(measured["skip_reason"]))
        self.assertFalse(later["checked"])

    def test_a_wrong_answer_fails_the_case_and_the_run(self):
        library = os.environ.get("TSCAN_BENCH_WRONG_ANSWER")
        if not library:
            self.skipTest("TSCAN_BENCH_WRONG_ANSWER is not set (run through ctest)")
        report_path = self.path("wrong.json")
        result = run(["--backend", "reference", "--shape", "64x48", "--axis", "1", "--shape", "4096",
                      "--output", report_path, "--time-limit", "0.01"], env={"LD_PRELOAD": library})
        self.assertEqual(result.returncode, 1, result.stderr)
        with open(report_path) as f:
            report = json.load(f)
        self.assertEqual(schema_errors(report), [])
        cases = {b["sizes"][0] if len(b["sizes"]) == 1 else "2d": b for b in report["benchmarks"]
                 if b["dtype"] == "float32" and b["op"] == "sum" and b["direction"] == "increasing"
                 and not b["exclusive"]}
        wrong, right = cases["2d"], cases[4096]
        self.assertEqual(wrong["status"], "failed")
        self.assertTrue(wrong["checked"])
        self.assertNotIn("time", wrong)
        self.assertEqual(wrong["check"]["mismatches"], 1)
        self.assertEqual(wrong["check"]["first_mismatch"]["line"], 0)
        self.assertEqual(wrong["check"]["first_mismatch"]["index"], 0)
        self.assertIn("wrong answer", wrong["error"])
        self.assertEqual(right["status"], "passed")  # 1-D outputs are left alone
        self.assertGreater(report["summary"]["failed"], 0)
        self.assertIn("FAILED: wrong answer", result.stdout)


if __name__ == "__main__":
    unittest.main()
