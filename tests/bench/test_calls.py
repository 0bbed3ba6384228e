"""`tscan-bench calls`: the command line, the no-GPU refusal, and on a GPU machine (skipped
elsewhere) a measurement of the linked library and of the same build loaded by path: a checked
answer, positive times, a report naming both."""
import json
import os

from benchtest import TempDirCase, no_gpu_env, run

LIBRARY = os.environ.get("TSCAN_LIBRARY", "")


class CallsTest(TempDirCase):
    def test_usage_errors_exit_2(self):
        for args, expected in [(["--bogus", "1"], "unknown option --bogus"),
                               (["--calls"], "--calls needs a value"),
                               (["--algo", "rows,columns"], "--algo rows,columns: one strategy"),
                               (["--rounds", "0"], "--rounds 1 to"),
                               (["--dtype", "nope"], "--dtype must name a dtype"),
                               (["--lib", "a", "--lib", "b", "--lib", "c"], "at most 2 --lib"),
                               (["--shape", "4x0x"], "")]:
            result = run(["calls"] + args, env=no_gpu_env())
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(expected, result.stderr)

    def test_help(self):
        result = run(["calls", "--help"])
        self.assertEqual(result.returncode, 0)
        self.assertIn("back to back", result.stdout)
        self.assertIn("Exit status", result.stdout)

    def test_without_a_gpu_it_says_so_and_runs_nothing(self):
        out = self.path("calls.json")
        result = run(["calls", "--output", out], env=no_gpu_env())
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("no CUDA device", result.stderr)
        self.assertFalse(os.path.exists(out))

    def test_a_measurement_on_a_gpu(self):
        if not LIBRARY:
            self.skipTest("TSCAN_LIBRARY is not set (run through ctest)")
        out = self.path("calls.json")
        result = run(["calls", "--shape", "3x1000", "--dtype", "int64", "--calls", "200", "--rounds", "3",
                      "--lib", LIBRARY, "--output", out])
        if "no CUDA device" in result.stderr:
            self.skipTest("no GPU")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual((report["shape"], report["dtype"], report["calls"]), ("3x1000", "int64", 200))
        self.assertIn(report["resolved_algo"], ["cub_device", "rows", "columns", "lookback", "stream"])
        self.assertGreater(report["bare_launch_us"], 0)
        [entry] = report["libraries"]
        self.assertEqual(entry["library"], LIBRARY)
        self.assertGreater(entry["call_us"], 0)
        self.assertAlmostEqual(entry["ratio_to_bare_launch"], entry["call_us"] / report["bare_launch_us"], places=6)
