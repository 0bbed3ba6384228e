"""`tscan-bench compare`: verdicts, threshold, noise, copy-relative judging, run-to-run spreads,
strategy matching and exit statuses."""
import random
import unittest

from benchtest import TempDirCase, case, report, run, schema_errors


def table(stdout):
    """{key: {column: cell}} from compare's markdown table, keyed by what benchtest.case put in
    place of the shape."""
    rows, header = {}, None
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| case |"):
            header = cells
        elif header and line.startswith("|") and len(cells) == len(header) and cells[0].count("/") >= 6:
            rows[cells[0].split("/")[2]] = dict(zip(header, cells))
    return rows


def verdicts(stdout):
    """{key: (verdict, note)} from compare's markdown table."""
    return {k: (row["verdict"], row["note"]) for k, row in table(stdout).items()}


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
        self.assertIn("1 SAME, 1 FAST, 1 SLOW, 0 AMBIGUOUS, 1 NEW, 2 GONE", result.stdout)
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

    def test_different_gpus_are_refused_unless_allowed(self):
        base, new = report(case("a", median=1e-3), device="GPU A"), report(case("a", median=1e-3), device="GPU B")
        result = self.compare(base, new)
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn('different GPUs', result.stderr)
        self.assertIn('"GPU A"', result.stderr)
        self.assertIn("--allow-different-gpus", result.stderr)
        self.assertEqual(result.stdout, "")
        allowed = self.compare(base, new, "--allow-different-gpus")
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        self.assertIn("different GPUs", allowed.stdout)


def sweep_pair(cases, drift, slowed=(), slowdown=0.05, seed=7):
    """A base and a new report of `cases` bandwidth-bound cases (at 80 % of the copy), the new
    one from a machine whose copies and cases all take `drift` longer, with +-0.5 % jitter per
    case, and the `slowed` cases `slowdown` slower on top."""
    rng = random.Random(seed)
    base, new = [], []
    for i in range(cases):
        key, median, copy = f"c{i:03d}", 1e-3 * (1 + i / cases), 0.8e-3 * (1 + i / cases)
        base.append(case(key, median=median, copy_median=copy))
        factor = (1 + drift) * (1 + rng.uniform(-0.005, 0.005)) * (1 + (slowdown if key in slowed else 0))
        new.append(case(key, median=median * factor, copy_median=copy * (1 + drift)))
    return report(*base), report(*new)


class CrossMachineTest(TempDirCase):
    def compare(self, base, new, *flags):
        return run(["compare", self.write_json("base.json", base), self.write_json("new.json", new)] + list(flags))

    def test_unchanged_code_on_a_slower_machine_is_all_same(self):
        # Every case 6 % slower, and so is every copy: the machine, not the code.
        result = self.compare(*sweep_pair(60, drift=0.06))
        self.assertEqual(result.returncode, 0, result.stdout)
        rows = table(result.stdout)
        self.assertEqual(len(rows), 60)
        self.assertEqual({r["verdict"] for r in rows.values()}, {"SAME"})
        self.assertEqual({r["decided by"] for r in rows.values()}, {"copy-relative"})
        self.assertIn("0 SLOW", result.stdout)

    def test_without_copies_the_drift_is_ambiguous_not_slow(self):
        # Absolute time alone cannot tell the machine from the code: the wider spread applies.
        base, new = sweep_pair(10, drift=0.06)
        for document in (base, new):
            for entry in document["benchmarks"]:
                del entry["copy"]
        result = self.compare(base, new)
        self.assertEqual(result.returncode, 0, result.stdout)
        rows = table(result.stdout).values()
        self.assertEqual({(r["verdict"], r["decided by"]) for r in rows}, {("AMBIGUOUS", "absolute (no copy)")})
        self.assertEqual({r["allowed"] for r in rows}, {"±20.0%"})

    def test_a_planted_slowdown_is_slow_where_history_bounds_the_spread(self):
        slowed = {"c003", "c017", "c041"}
        base, new = sweep_pair(60, drift=0.03, slowed=slowed, slowdown=0.05)
        names = [e["name"] for e in new["benchmarks"]]
        spreads = self.write_json("spread.json", {"format": "tscan-bench-spread", "format_version": 1,
                                                  "cases": {name: 0.015 for name in names}})
        result = self.compare(base, new, "--spread", spreads)
        self.assertEqual(result.returncode, 1, result.stdout)
        rows = table(result.stdout)
        self.assertEqual({k for k, r in rows.items() if r["verdict"] == "SLOW"}, slowed)
        self.assertEqual({r["verdict"] for k, r in rows.items() if k not in slowed}, {"SAME"})
        self.assertIn("(history)", rows["c003"]["allowed"])
        # Without history, 4 % is inside the default spread: listed AMBIGUOUS, exit 0.
        base, new = sweep_pair(60, drift=0.03, slowed=slowed, slowdown=0.04)
        result = self.compare(base, new)
        self.assertEqual(result.returncode, 0, result.stdout)
        rows = table(result.stdout)
        self.assertEqual({k for k, r in rows.items() if r["verdict"] == "AMBIGUOUS"}, slowed)
        self.assertIn("3 AMBIGUOUS", result.stdout)

    def test_a_case_far_from_the_copy_gets_the_wider_spread(self):
        # At 10 % of the copy's speed: 12 % slower is inside the 20 % off-copy spread.
        base = report(case("slow_path", median=1e-3, copy_median=1e-4))
        new = report(case("slow_path", median=1.12e-3, copy_median=1e-4))
        rows = table(self.compare(base, new).stdout)
        self.assertEqual(rows["slow_path"]["verdict"], "AMBIGUOUS")
        self.assertEqual(rows["slow_path"]["allowed"], "±20.0%")
        rows = table(self.compare(base, new, "--off-copy-spread", "10").stdout)
        self.assertEqual(rows["slow_path"]["verdict"], "SLOW")

    def test_copy_moved_but_case_did_not_is_same_by_absolute(self):
        base = report(case("a", median=1e-3, copy_median=0.8e-3))
        new = report(case("a", median=1.001e-3, copy_median=0.72e-3))
        rows = table(self.compare(base, new).stdout)
        self.assertEqual((rows["a"]["verdict"], rows["a"]["decided by"]), ("SAME", "absolute"))

    def test_bad_spread_file_exits_2_naming_the_field(self):
        base = report(case("a", median=1e-3))
        bad = self.write_json("spread.json", {"format": "tscan-bench-spread", "cases": {"x": -1}})
        result = self.compare(base, base, "--spread", bad)
        self.assertEqual(result.returncode, 2)
        self.assertIn("cases.x: the spread must be a non-negative fraction", result.stderr)
        other = self.write_json("other.json", {"format": "something"})
        result = self.compare(base, base, "--spread", other)
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a spread file", result.stderr)


if __name__ == "__main__":
    unittest.main()
