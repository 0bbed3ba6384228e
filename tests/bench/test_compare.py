"""`tscan-bench compare`: verdicts, threshold, noise, strategy matching and exit statuses."""
import unittest

from benchtest import TempDirCase, case, report, run, schema_errors


def verdicts(stdout):
    """{key: (verdict, note)} from compare's markdown table, keyed by what benchtest.case put
    in place of the shape."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 7 and cells[0].count("/") >= 6:
            rows[cells[0].split("/")[2]] = (cells[5], cells[6])
    return rows


class CompareTest(TempDirCase):
    def compare(self, base, new, *flags):
        return run(["compare", self.write_json("base.json", base), self.write_json("new.json", new)] + list(flags))

    def test_synthetic_reports_are_valid_reports(self):
        document = report(case("a", median=1e-3), case("b"), case("c", status="failed"))
        self.assertEqual(schema_errors(document), [])

    def test_every_verdict(self):
        base = report(case("same", median=1.00e-3), case("fast", median=1.0e-3), case("slow", median=1.0e-3),
                      case("gone", median=1.0e-3), case("gone_failed", median=1.0e-3), case("untimed"))
        new = report(case("same", median=1.01e-3), case("fast", median=0.8e-3), case("slow", median=1.2e-3),
                     case("new", median=1.0e-3), case("gone_failed", status="failed"), case("untimed"))
        result = self.compare(base, new)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        rows = verdicts(result.stdout)
        self.assertEqual({k: v[0] for k, v in rows.items()},
                         {"same": "SAME", "fast": "FAST", "slow": "SLOW", "new": "NEW", "gone": "GONE",
                          "gone_failed": "GONE"})
        self.assertIn("failed in new", rows["gone_failed"][1])
        self.assertIn("1 SAME, 1 FAST, 1 SLOW, 1 NEW, 2 GONE", result.stdout)
        self.assertIn("1 cases timed in neither report", result.stdout)

    def test_exit_zero_without_slow_cases(self):
        base = report(case("a", median=1.0e-3), case("b", median=1.0e-3))
        new = report(case("a", median=0.5e-3), case("c", median=1.0e-3))
        result = self.compare(base, new)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual({k: v[0] for k, v in verdicts(result.stdout).items()},
                         {"a": "FAST", "b": "GONE", "c": "NEW"})

    def test_threshold(self):
        base, new = report(case("a", median=1.0e-3)), report(case("a", median=1.08e-3))
        self.assertEqual(verdicts(self.compare(base, new).stdout)["a"][0], "SLOW")  # default 5 %
        result = self.compare(base, new, "--threshold", "10")
        self.assertEqual(verdicts(result.stdout)["a"][0], "SAME")
        self.assertEqual(result.returncode, 0)

    def test_noise_widens_the_allowed_change(self):
        # 8 % slower, but each report's samples spread 5 %: allowed 2 x sqrt(2) x 5 % = 14.1 %.
        base = report(case("a", median=1.0e-3, noise=0.05))
        new = report(case("a", median=1.08e-3, noise=0.05))
        result = self.compare(base, new)
        self.assertEqual(verdicts(result.stdout)["a"][0], "SAME", result.stdout)
        self.assertIn("±14.1%", result.stdout)
        self.assertEqual(verdicts(self.compare(base, new, "--noise-factor", "1").stdout)["a"][0], "SLOW")

    def test_strategies_matched_across_reports(self):
        peers = report(case("a", strategy="torch", median=2.0e-3), case("b", strategy="torch", median=1.0e-3))
        tscan = report(case("a", strategy="auto", median=1.0e-3), case("a", strategy="rows", median=9.0e-3),
                       case("b", strategy="auto", median=1.5e-3))
        result = self.compare(peers, tscan, "--base-strategy", "torch", "--new-strategy", "auto")
        self.assertEqual(result.returncode, 1)
        self.assertEqual({k: v[0] for k, v in verdicts(result.stdout).items()}, {"a": "FAST", "b": "SLOW"})

    def test_unreadable_or_incompatible_reports_exit_2_naming_the_file(self):
        good = self.write_json("good.json", report(case("a", median=1e-3)))
        bad_json = self.path("bad.json")
        with open(bad_json, "w") as f:
            f.write("{ not json")
        not_report = self.write_json("other.json", {"benchmarks": []})
        future = report(case("a", median=1e-3))
        future["format_version"] = 2
        future = self.write_json("future.json", future)
        host = self.write_json("host.json", report(case("a", median=1e-3), backend="reference"))
        for base, new, expected in [(self.path("missing.json"), good, "missing.json: cannot read"),
                                    (good, bad_json, "bad.json: not valid JSON"),
                                    (not_report, good, "other.json: not a tscan-bench report"),
                                    (good, future, "future.json: report format version 2"),
                                    (good, host, "incompatible reports")]:
            result = run(["compare", base, new])
            self.assertEqual(result.returncode, 2, (base, new, result.stderr))
            self.assertIn(expected, result.stderr)

    def test_usage_errors_exit_2(self):
        good = self.write_json("good.json", report())
        for args, expected in [([good], "needs two reports"), ([good, good, good], "unexpected argument"),
                               ([good, good, "--threshold", "x"], "--threshold"),
                               ([good, good, "--threshold"], "needs a value"),
                               ([good, good, "--bogus"], "unknown option '--bogus'"),
                               ([good, good, "--base-strategy", "torch"], "go together")]:
            result = run(["compare"] + args)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn(expected, result.stderr)

    def test_device_mismatch_is_a_warning(self):
        result = self.compare(report(case("a", median=1e-3), device="GPU A"),
                              report(case("a", median=1e-3), device="GPU B"))
        self.assertEqual(result.returncode, 0)
        self.assertIn("different devices", result.stdout)


if __name__ == "__main__":
    unittest.main()
