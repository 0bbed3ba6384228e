"""A real report, from the reference backend, against bench/report.schema.json and its own arithmetic."""
import json
import math
import unittest

from benchtest import TempDirCase, run, schema_errors

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
               "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8}


class ReportTest(TempDirCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._dir = tempfile.TemporaryDirectory(prefix="tscan-bench-report-")
        cls.report_path = f"{cls._dir.name}/report.json"
        # Every dtype and both operators on two small shapes, one strided, plus the quick sweep's classes.
        cls.result = run(["--backend", "reference", "--quick", "--output", cls.report_path, "--time-limit", "0.02"])
        cls.mixed_path = f"{cls._dir.name}/mixed.json"
        cls.mixed = run(["--backend", "reference", "--shape", "33x17", "--axis", "1", "--shape", "40x8",
                         "--layout", "transposed", "--axis", "1", "--dtype", "all", "--op", "all",
                         "--exclusive", "both", "--direction", "both", "--output", cls.mixed_path,
                         "--time-limit", "0.01", "--min-samples", "3"])

        cls.wider_path = f"{cls._dir.name}/wider.json"
        cls.wider = run(["--backend", "reference", "--shape", "33x17", "--axis", "0", "--dtype", "uint8,int8,int16",
                         "--output-dtype", "int32", "--op", "all", "--output", cls.wider_path,
                         "--time-limit", "0.01", "--min-samples", "3"])

    @classmethod
    def tearDownClass(cls):
        cls._dir.cleanup()

    def load(self, path, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(path) as f:
            return json.load(f)

    def test_reports_match_the_schema(self):
        for path, result in ((self.report_path, self.result), (self.mixed_path, self.mixed),
                             (self.wider_path, self.wider)):
            with self.subTest(path=path):
                self.assertEqual(schema_errors(self.load(path, result)), [])

    def test_every_case_passed_and_the_numbers_agree(self):
        report = self.load(self.mixed_path, self.mixed)
        benchmarks = report["benchmarks"]
        self.assertEqual(len(benchmarks), 2 * 12 * 2 * 2 * 2)
        self.assertEqual(len({b["name"] for b in benchmarks}), len(benchmarks))
        copies = {c["bytes"]: c for c in report["copies"]}
        for b in benchmarks:
            with self.subTest(name=b["name"]):
                self.assertEqual(b["status"], "passed")
                self.assertTrue(b["check"]["passed"])
                self.assertEqual(b["check"]["elements_checked"], b["elements"])  # small: checked in full
                tensor_bytes = b["elements"] * DTYPE_BYTES[b["dtype"]]
                self.assertEqual(b["bytes_moved"], 2 * tensor_bytes)
                median = b["time"]["median"]
                self.assertTrue(b["time"]["min"] <= b["time"]["q1"] <= median <= b["time"]["q3"] <= b["time"]["max"])
                self.assertTrue(math.isclose(b["real_time"], median * 1e9, rel_tol=1e-9))
                self.assertTrue(math.isclose(b["bytes_per_second"], b["bytes_moved"] / median, rel_tol=1e-9))
                self.assertTrue(math.isclose(b["items_per_second"], b["elements"] / median, rel_tol=1e-9))
                copy = copies[tensor_bytes]
                self.assertEqual(b["copy"], {"bytes": tensor_bytes, "median": copy["time"]["median"]})
                self.assertTrue(math.isclose(b["percent_of_copy"], 100 * copy["time"]["median"] / median,
                                             rel_tol=1e-9))
                self.assertGreaterEqual(b["time"]["samples"], 3)
        transposed = [b for b in benchmarks if b["layout"] == "transposed"]
        self.assertEqual(transposed[0]["input_strides"], [1, 40])
        self.assertEqual(transposed[0]["output_strides"], [8, 1])

    def test_wider_outputs_count_their_bytes_at_each_width(self):
        report = self.load(self.wider_path, self.wider)
        benchmarks = report["benchmarks"]
        self.assertEqual({(b["dtype"], b["op"]) for b in benchmarks},
                         {(d, op) for d in ("uint8", "int8", "int16") for op in ("sum", "prod")})
        copies = {c["bytes"]: c for c in report["copies"]}
        for b in benchmarks:
            with self.subTest(name=b["name"]):
                self.assertEqual(b["status"], "passed")
                self.assertEqual(b["output_dtype"], "int32")
                self.assertIn(f"/{b['dtype']}->int32/", b["name"])
                self.assertEqual(b["bytes_read"], b["elements"] * DTYPE_BYTES[b["dtype"]])
                self.assertEqual(b["bytes_written"], b["elements"] * 4)
                self.assertEqual(b["bytes_moved"], b["bytes_read"] + b["bytes_written"])
                # The copy ceiling moves as many bytes: it reads and writes half of them each.
                self.assertEqual(b["copy"]["bytes"], (b["bytes_moved"] + 1) // 2)
                self.assertEqual(copies[b["copy"]["bytes"]]["bytes_moved"], 2 * b["copy"]["bytes"])

    def test_context_says_there_was_no_gpu(self):
        report = self.load(self.report_path, self.result)
        context = report["context"]
        self.assertEqual(context["backend"], "reference")
        self.assertEqual(context["timer"], "host_clock")
        self.assertFalse(context["gpu_available"])
        self.assertTrue(context["gpu_unavailable_reason"])
        self.assertEqual(report["devices"], [])
        self.assertIn("--quick", context["command_line"])
        self.assertEqual(report["settings"]["min_samples"], 10)
        self.assertEqual(report["summary"]["cases"], len(report["benchmarks"]))


if __name__ == "__main__":
    unittest.main()
