"""`tscan-bench ab`: the command line, libraries that do not load, the no-GPU refusal, and on a
GPU machine (skipped elsewhere) one build against itself: no SLOW, two reports, one compare."""
import json
import os
import unittest

from benchtest import TempDirCase, no_gpu_env, run

LIBRARY = os.environ.get("TSCAN_LIBRARY", "")


class AbTest(TempDirCase):
    def setUp(self):
        super().setUp()
        if not LIBRARY:
            self.skipTest("TSCAN_LIBRARY is not set (run through ctest)")

    def test_usage_errors_exit_2(self):
        for args, expected in [([], "needs --lib-a PATH and --lib-b PATH"),
                               (["--lib-a", LIBRARY], "needs --lib-a PATH and --lib-b PATH"),
                               (["--lib-a", LIBRARY, "--lib-b"], "--lib-b needs a value"),
                               (["--lib-a", LIBRARY, "--lib-b", LIBRARY, "--output", "x.json"],
                                "--output does not apply"),
                               (["--lib-a", LIBRARY, "--lib-b", LIBRARY, "--threshold", "x"], "--threshold: 'x'"),
                               (["--lib-a", LIBRARY, "--lib-b", LIBRARY, "--dtype", "nope"], "unknown dtype 'nope'"),
                               (["--lib-a", LIBRARY, "--lib-b", LIBRARY, "--random", "4", "--sweep", "x.json"],
                                "does not take --sweep")]:
            result = run(["ab"] + args, env=no_gpu_env())
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(expected, result.stderr)

    def test_help(self):
        result = run(["ab", "--help"])
        self.assertEqual(result.returncode, 0)
        self.assertIn("--lib-a PATH --lib-b PATH", result.stdout)
        self.assertIn("Exit status", result.stdout)

    def test_a_library_that_does_not_load_is_named(self):
        not_elf = self.path("not-a-library.so")
        with open(not_elf, "w") as f:
            f.write("text")
        for args, expected in [(["--lib-a", self.path("missing.so"), "--lib-b", LIBRARY],
                                "--lib-a " + self.path("missing.so") + ": cannot load"),
                               (["--lib-a", LIBRARY, "--lib-b", not_elf], "--lib-b " + not_elf + ": cannot load")]:
            result = run(["ab"] + args, env=no_gpu_env())
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(expected, result.stderr)

    def test_without_a_gpu_it_says_so_and_runs_nothing(self):
        result = run(["ab", "--lib-a", LIBRARY, "--lib-b", LIBRARY, "--quick"], env=no_gpu_env(), cwd=self.path(""))
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("no CUDA device", result.stderr)
        self.assertIn("A/B timing needs a GPU", result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertFalse(os.path.exists(self.path("tscan-bench-a.json")))

    def run_on_gpu(self, *args):
        """`ab` of the library against itself with these run options; its two reports (each
        checked: nothing failed, the build named), or a skip without a GPU."""
        a, b = self.path("a.json"), self.path("b.json")
        result = run(["ab", "--lib-a", LIBRARY, "--lib-b", LIBRARY, "--output-a", a, "--output-b", b] + list(args))
        if "no CUDA device" in result.stderr:
            self.skipTest("no GPU")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("0 SLOW", result.stdout)
        reports = []
        for path in (a, b):
            with open(path) as f:
                reports.append(json.load(f))
            self.assertEqual(reports[-1]["summary"]["failed"], 0)
            self.assertTrue(any("loaded from " + LIBRARY in n for n in reports[-1]["context"]["notes"]))
        return reports

    def test_one_build_against_itself_on_a_gpu(self):
        for report in self.run_on_gpu("--shape", "16777216", "--axis", "0", "--shape", "4096x4096", "--axis", "0",
                                      "--algo", "auto,lookback"):
            self.assertGreater(report["summary"]["passed"], 0)

    def test_random_cases_on_a_gpu(self):
        # The random sweep through the shared run loop: both builds time the same drawn cases.
        reports = self.run_on_gpu("--random", "3", "--seed", "5", "--random-min-mib", "1", "--random-max-mib", "4",
                                  "--algo", "auto")
        names = [[case["name"] for case in report["benchmarks"]] for report in reports]
        self.assertEqual(names[0], names[1])
        self.assertEqual(len(names[0]), 3)
        self.assertIn("distribution", reports[0]["summary"])

if __name__ == "__main__":
    unittest.main()
