"""The random sweep (--random N --seed S): reproducible draws that cover every dtype, form and
layout kind; a small run on the reference backend; the summary's distribution."""
import json
import math
import unittest

from benchtest import TempDirCase, case, report, run, schema_errors
from test_peers import load_peers_module

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
               "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8}
LAYOUT_CLASSES = {"random_packed", "random_padded", "random_sliced", "random_transposed", "random_broadcast"}
MIB = 1024 * 1024


packed_strides = load_peers_module().packed_strides


def percentile(values, q):
    """numpy's default (linear) percentile, without numpy."""
    ordered = sorted(values)
    position = q / 100 * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (position - below) * (ordered[above] - ordered[below])


class RandomSweepTest(TempDirCase):
    def draws(self, *args):
        """The cases of a random sweep (reference backend, listed, not run)."""
        path = self.path("cases.json")
        result = run(["--backend", "reference", "--list", "--output", path] + list(args))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(path) as f:
            return json.load(f)["benchmarks"]

    def test_the_same_seed_gives_the_same_cases_and_a_longer_sweep_extends_it(self):
        first = self.draws("--random", "300", "--seed", "7")
        again = self.draws("--random", "300", "--seed", "7")
        self.assertEqual(first, again)
        self.assertEqual(len(first), 300)
        shorter = self.draws("--random", "40", "--seed", "7")
        self.assertEqual(shorter, first[:40])

    def test_different_seeds_differ(self):
        names = {c["name"] for c in self.draws("--random", "100", "--seed", "7")}
        other = {c["name"] for c in self.draws("--random", "100", "--seed", "8")}
        self.assertLess(len(names & other), 5)

    def test_a_few_hundred_draws_cover_every_dtype_form_and_layout(self):
        cases = self.draws("--random", "300", "--seed", "11")
        self.assertEqual({c["dtype"] for c in cases}, set(DTYPE_BYTES))
        self.assertEqual({c["op"] for c in cases}, {"sum", "prod"})
        self.assertEqual({c["direction"] for c in cases}, {"increasing", "decreasing"})
        self.assertEqual({c["exclusive"] for c in cases}, {False, True})
        self.assertEqual({c["class"] for c in cases}, LAYOUT_CLASSES)
        ndims = [len(c["sizes"]) for c in cases]
        self.assertEqual(set(ndims), set(range(1, 9)))
        self.assertGreater(sum(n <= 4 for n in ndims), 0.7 * len(cases))
        self.assertTrue(any(c["axis"] < len(c["sizes"]) - 1 for c in cases))
        self.assertGreater(sum(s % 2 == 1 and s > 1 for c in cases for s in c["sizes"]), 100)
        # Tensor bytes within the reference backend's default range of a draw (0.25 to 2 MiB),
        # and log-uniform: some in each half of the range's logarithm.
        tensor_bytes = [c["elements"] * DTYPE_BYTES[c["dtype"]] for c in cases]
        self.assertGreater(sum(0.25 * MIB <= b <= 2 * MIB for b in tensor_bytes), 0.95 * len(cases))
        self.assertGreater(sum(b < 0.7 * MIB for b in tensor_bytes), 0.3 * len(cases))
        self.assertGreater(sum(b > 0.8 * MIB for b in tensor_bytes), 0.3 * len(cases))
        for c in cases:
            with self.subTest(name=c["name"]):
                self.assert_layout(c)

    def assert_layout(self, c):
        sizes, strides, axis, kind = c["sizes"], c["input_strides"], c["axis"], c["class"]
        wide = [d for d, s in enumerate(sizes) if s > 1]
        self.assertEqual(c["output_strides"], packed_strides(sizes))
        span = 1 + sum((s - 1) * abs(t) for s, t in zip(sizes, strides))
        self.assertLessEqual(span, 4 * c["elements"])
        if kind == "random_packed":
            self.assertEqual(c["layout"], "packed")
            self.assertEqual(strides, packed_strides(sizes))
            return
        self.assertEqual(c["layout"], "strided")
        if kind == "random_padded":
            self.assertEqual(strides[-1], 1)
            self.assertGreater(strides[-2], sizes[-1])
        elif kind == "random_sliced":
            self.assertTrue(any(abs(t) > p for t, p, s in zip(strides, packed_strides(sizes), sizes) if s > 1))
        elif kind == "random_transposed":
            ordered = [strides[d] for d in wide]
            self.assertNotEqual(ordered, sorted(ordered, reverse=True))
            self.assertEqual(sorted(strides[d] for d in wide), sorted(ordered))
        else:
            self.assertTrue(any(strides[d] == 0 for d in wide if d != axis))
            self.assertNotEqual(strides[axis], 0)

    def test_flags_limit_the_draws(self):
        cases = self.draws("--random", "60", "--seed", "5", "--dtype", "int8,float64", "--op", "prod",
                           "--exclusive", "yes", "--random-min-mib", "0.01", "--random-max-mib", "0.02")
        self.assertEqual({c["dtype"] for c in cases}, {"int8", "float64"})
        self.assertEqual({(c["op"], c["exclusive"]) for c in cases}, {("prod", True)})
        self.assertTrue(all(c["elements"] * DTYPE_BYTES[c["dtype"]] <= 0.02 * MIB for c in cases))

    def test_some_cases_draw_a_wider_output(self):
        # One case in five of a dtype that widens takes an allowed wider output, within the
        # memory bound (input span and output within 5 x the top of the byte range).
        wider = {"int8": {"int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"},
                 "float16": {"float32", "float64"}, "bfloat16": {"float32", "float64"}, "float32": {"float64"}}
        cases = self.draws("--random", "300", "--seed", "11")
        widens = [c for c in cases if c["dtype"] != "float64"]
        widened = [c for c in cases if c["output_dtype"] != c["dtype"]]
        self.assertGreater(len(widened), 0.1 * len(widens))
        self.assertLess(len(widened), 0.3 * len(widens))
        for c in widened:
            with self.subTest(name=c["name"]):
                self.assertNotEqual(c["dtype"], "float64")
                self.assertIn(f"/{c['dtype']}->{c['output_dtype']}/", c["name"])
                if c["dtype"] in wider:
                    self.assertIn(c["output_dtype"], wider[c["dtype"]])
                else:  # the other integers: an integer at least as wide
                    self.assertTrue(c["output_dtype"].startswith(("int", "uint")))
                    self.assertGreaterEqual(DTYPE_BYTES[c["output_dtype"]], DTYPE_BYTES[c["dtype"]])
                span = 1 + sum((n - 1) * abs(t) for n, t in zip(c["sizes"], c["input_strides"]))
                self.assertLessEqual(span * DTYPE_BYTES[c["dtype"]] + c["elements"] * DTYPE_BYTES[c["output_dtype"]],
                                     5 * 2 * MIB)

    def test_bad_random_flags(self):
        for args, expected in [
            (["--random", "0"], "--random: '0'"),
            (["--random", "5", "--quick"], "--random replaces the sweep: it does not take --quick"),
            (["--random", "5", "--shape", "8x8"], "it does not take --shape"),
            (["--random-min-mib", "1"], "--random-min-mib needs --random N"),
            (["--random", "5", "--random-min-mib", "4", "--random-max-mib", "2"],
             "--random-min-mib 4 is above --random-max-mib 2"),
            (["--random", "5", "--random-max-mib", "0"], "--random-max-mib: '0' is not a positive number"),
            (["--random", "5", "--random-max-mib", "100000"], "over the limit"),
            (["--random", "5", "--output-dtype", "int32"], "it does not take --output-dtype"),
        ]:
            with self.subTest(args=args):
                result = run(["--backend", "reference"] + args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(expected, result.stderr)

    def test_help_names_the_flags(self):
        result = run(["--help"])
        self.assertEqual(result.returncode, 0)
        for text in ("--random N", "--random-min-mib", "--random-max-mib", "tscan-bench summary REPORT.json"):
            self.assertIn(text, result.stdout)

    def test_a_small_run_on_the_reference_backend(self):
        path = self.path("random.json")
        result = run(["--backend", "reference", "--random", "16", "--seed", "3", "--random-min-mib", "0.01",
                      "--random-max-mib", "0.1", "--min-samples", "2", "--time-limit", "0.1", "--output", path])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(path) as f:
            document = json.load(f)
        self.assertEqual(schema_errors(document), [])
        self.assertEqual(document["settings"]["sweep"], "random")
        self.assertEqual(document["settings"]["random"], {"count": 16, "min_mib": 0.01, "max_mib": 0.1})
        self.assertEqual({b["status"] for b in document["benchmarks"]}, {"passed"},
                         [b.get("error_message") for b in document["benchmarks"]])
        distribution = document["summary"]["distribution"]
        self.assertEqual(distribution["strategy"], "reference")
        self.assertEqual(distribution["percent_of_copy"]["all"]["cases"], 16)
        self.assertEqual(sum(distribution["percent_of_copy"][g]["cases"]
                             for g in ("1_byte", "2_byte", "4_byte", "8_byte")), 16)
        percents = [b["percent_of_copy"] for b in document["benchmarks"]]
        self.assertAlmostEqual(distribution["percent_of_copy"]["all"]["median"], percentile(percents, 50))
        self.assertIn("reference's % of copy over 16 cases", result.stdout)
        # The summary command reads the same numbers back from the report.
        again = run(["summary", path, "--json"])
        self.assertEqual(again.returncode, 0, again.stderr)
        # (the same up to the last digit of numbers that the JSON printed to 15 or 17 digits)
        self.assert_close(json.loads(again.stdout), distribution)

    def assert_close(self, got, expected):
        if isinstance(expected, dict):
            self.assertEqual(set(got), set(expected))
            for key in expected:
                self.assert_close(got[key], expected[key])
        elif isinstance(expected, float):
            self.assertTrue(math.isclose(got, expected, rel_tol=1e-12), (got, expected))
        else:
            self.assertEqual(got, expected)


class GpuRandomSweepTest(TempDirCase):
    """On a GPU (skipped without one): AUTO and every forced strategy on small drawn cases of
    every layout kind, each checked, and the distribution of AUTO against them."""

    def test_every_strategy_passes_on_drawn_cases(self):
        path = self.path("gpu.json")
        result = run(["--backend", "gpu", "--random", "40", "--seed", "2", "--random-min-mib", "1",
                      "--random-max-mib", "8", "--min-samples", "3", "--time-limit", "0.05", "--output", path])
        if result.returncode == 1 and "no CUDA device" in result.stderr:
            self.skipTest("no GPU")
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-2000:])
        with open(path) as f:
            document = json.load(f)
        self.assertEqual(schema_errors(document), [])
        benchmarks = document["benchmarks"]
        self.assertEqual({b["class"] for b in benchmarks}, LAYOUT_CLASSES)
        self.assertEqual({b["status"] for b in benchmarks if b["strategy"] == "auto"}, {"passed"})
        self.assertTrue(all(b["check"]["passed"] for b in benchmarks if b["checked"]))
        distribution = document["summary"]["distribution"]
        self.assertEqual(distribution["strategy"], "auto")
        self.assertEqual(distribution["percent_of_copy"]["all"]["cases"], 40)
        self.assertGreater(distribution["against_best_forced"]["cases"], 30)


def entry(key, strategy, dtype, median, percent):
    """A synthetic report entry of dtype: timed (median s, % of copy) unless median is None."""
    document = case(key, strategy=strategy, median=median)
    document["name"] = document["run_name"] = document["name"].replace("float32", dtype)
    document["dtype"] = document["output_dtype"] = dtype
    if median is not None:
        document["percent_of_copy"] = percent
    return document


class SummaryTest(TempDirCase):
    """The distribution, computed by `tscan-bench summary`, on a report whose answer is known."""

    def setUp(self):
        super().setUp()
        self.percents = {"int8": [12.0, 50.0, 31.0], "float16": [40.0, 45.5], "float32": [70.0, 90.0, 81.0, 66.0],
                         "int64": [99.0]}
        entries, self.ratios = [], []
        for dtype, values in self.percents.items():
            for i, percent in enumerate(values):
                key = f"{dtype}-{i}"
                auto = 1e-3 * (1 + i)
                # Forced strategies: rows takes 1/(1.02 + i/50) of AUTO's time, columns twice it.
                rows = auto / (1.02 + i / 50)
                entries += [entry(key, "auto", dtype, auto, percent), entry(key, "rows", dtype, rows, 50.0),
                            entry(key, "columns", dtype, 2 * auto, 20.0), entry(key, "lookback", dtype, None, None)]
                self.ratios.append(auto / rows)
        # An AUTO that was not timed, and one with no forced strategy beside it.
        entries.append(entry("untimed", "auto", "float32", None, None))
        entries.append(entry("alone", "auto", "uint16", 1e-3, 55.0))
        self.percents["float16"].append(55.0)
        self.report = report(*entries)

    def summary(self, *flags):
        result = run(["summary", self.write_json("report.json", self.report)] + list(flags))
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def test_the_percentiles_are_numpys(self):
        self.assertEqual(schema_errors(self.report), [])
        distribution = json.loads(self.summary("--json").stdout)
        self.assertEqual(distribution["strategy"], "auto")
        self.assertEqual((distribution["cases"], distribution["untimed"]), (12, 1))
        groups = {"all": [p for values in self.percents.values() for p in values], "1_byte": self.percents["int8"],
                  "2_byte": self.percents["float16"], "4_byte": self.percents["float32"],
                  "8_byte": self.percents["int64"]}
        for group, values in groups.items():
            with self.subTest(group=group):
                got = distribution["percent_of_copy"][group]
                self.assertEqual(got["cases"], len(values))
                self.assertAlmostEqual(got["worst"], min(values))
                self.assertAlmostEqual(got["p10"], percentile(values, 10))
                self.assertAlmostEqual(got["median"], percentile(values, 50))
        self.assertEqual(distribution["percent_of_copy"]["all"]["worst_case"],
                         "sum/int8/int8-0/axis0/packed/increasing/inclusive/auto")

    def test_auto_against_the_best_forced_strategy(self):
        against = json.loads(self.summary("--json").stdout)["against_best_forced"]
        self.assertEqual(against["cases"], len(self.ratios))
        self.assertAlmostEqual(against["percent_within_3"], 100 * sum(r <= 1.03 for r in self.ratios) / 10)
        self.assertAlmostEqual(against["percent_within_5"], 100 * sum(r <= 1.05 for r in self.ratios) / 10)
        self.assertAlmostEqual(against["worst_ratio"], max(self.ratios))
        self.assertEqual(against["worst_case"], "sum/float32/float32-3/axis0/packed/increasing/inclusive/auto")
        # Both thresholds are exercised: some ratios fall between them, some above.
        self.assertTrue(any(1.03 < r <= 1.05 for r in self.ratios) and any(r > 1.05 for r in self.ratios))

    def test_the_table_and_another_strategy(self):
        table = self.summary().stdout
        self.assertIn("auto's % of copy over 12 cases (1 not timed)", table)
        self.assertIn("within 3 % in 40.0 %", table)
        rows = json.loads(self.summary("--json", "--strategy", "rows").stdout)
        self.assertEqual(rows["percent_of_copy"]["all"]["median"], 50.0)
        self.assertEqual(rows["against_best_forced"]["cases"], 10)  # rows against columns

    def test_bad_input(self):
        for args, expected in [([], "needs a report"), (["a.json", "b.json"], "summary takes one report"),
                               ([self.path("absent.json")], "absent.json"),
                               ([self.write_json("other.json", {"format": "x"})], "not a tscan-bench report")]:
            with self.subTest(args=args):
                result = run(["summary"] + args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(expected, result.stderr)


if __name__ == "__main__":
    unittest.main()
