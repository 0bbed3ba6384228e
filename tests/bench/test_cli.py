"""The command line: bad flags and sweep files exit 2 naming the problem; --help and --list."""
import json
import os
import unittest

from benchtest import TempDirCase, run


class CommandLineTest(TempDirCase):
    def assert_usage_error(self, args, *expected):
        result = run(["--backend", "reference"] + args)
        self.assertEqual(result.returncode, 2, f"{args}: {result.stderr}")
        for text in expected:
            self.assertIn(text, result.stderr, args)
        self.assertIn("--help", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_bad_flags(self):
        cases = [
            (["--frobnicate"], "unknown option '--frobnicate'"),
            (["stray"], "unexpected argument 'stray'"),
            (["--dtype", "float33"], "--dtype", "float33", "float32"),
            (["--dtype", "float32,"], "--dtype"),
            (["--op", "max"], "--op", "'max'"),
            (["--algo", "fastest"], "--algo", "'fastest'"),
            (["--direction", "sideways"], "--direction", "'sideways'"),
            (["--exclusive", "maybe"], "--exclusive", "'maybe'"),
            (["--dtype"], "--dtype needs a value"),
            (["--shape", "12xa"], "--shape", "'12xa'"),
            (["--shape", "0x5"], "--shape", "'0x5'"),
            (["--shape", "2x2x2x2x2x2x2x2x2"], "more than 8 dimensions"),
            (["--axis", "1"], "--axis must follow a --shape"),
            (["--shape", "4x4", "--axis", "2"], "--axis", "axis 2 is out of range for a 2-d shape"),
            (["--shape", "4", "--layout", "transposed"], "--layout", "needs at least 2 dimensions"),
            (["--shape", "4x4", "--layout", "diagonal"], "--layout", "'diagonal'"),
            (["--min-samples", "1"], "--min-samples", "'1'"),
            (["--min-samples", "ten"], "--min-samples", "'ten'"),
            (["--max-noise", "-1"], "--max-noise", "'-1'"),
            (["--time-limit", "0"], "--time-limit", "'0'"),
            (["--warmup", "-2"], "--warmup"),
            (["--device", "x"], "--device"),
            (["--backend", "tpu"], "--backend", "'tpu'"),
            (["--list=yes"], "--list takes no value"),
            (["--output="], "--output: empty file name"),
            (["--output-dtype", "int33"], "--output-dtype: unknown dtype 'int33'"),
            (["--dtype", "uint8,float16", "--output-dtype", "int32"], "output dtype int32",
             "dtype float16"),
            (["--dtype", "int64", "--output-dtype", "int32"], "output dtype int32", "dtype int64"),
        ]
        for args, *expected in cases:
            with self.subTest(args=args):
                self.assert_usage_error(args, *expected)

    def test_bad_sweep_files(self):
        def sweep(name, document):
            path = self.path(name)
            with open(path, "w") as f:
                f.write(document if isinstance(document, str) else json.dumps(document))
            return path

        shape = {"sizes": [64, 64], "axis": 1}
        cases = [
            (self.path("absent.json"), "absent.json: cannot open"),
            (sweep("syntax.json", "{\"entries\": ["), "syntax.json: not valid JSON"),
            (sweep("empty.json", {"entries": []}), "\"entries\" must be a non-empty array"),
            (sweep("key.json", {"entries": [{"shapes": [shape]}], "extra": 1}), "unknown key 'extra'"),
            (sweep("entry_key.json", {"entries": [{"shapes": [shape], "dtype": ["float32"]}]}),
             "entries[0]: unknown key 'dtype'"),
            (sweep("dtype.json", {"entries": [{"shapes": [shape], "dtypes": ["float33"]}]}),
             "entries[0].dtypes: unknown dtype 'float33'"),
            (sweep("axis.json", {"entries": [{"shapes": [shape, {"sizes": [8, 8], "axis": 5}]}]}),
             "entries[0].shapes[1]", "axis 5 is out of range"),
            (sweep("sizes.json", {"entries": [{"shapes": [{"sizes": [8, 0]}]}]}),
             "entries[0].shapes[0]", "not positive"),
            (sweep("strides.json", {"entries": [{"shapes": [{"sizes": [8, 8], "input_strides": [1]}]}]}),
             "input_strides has 1 values for 2 sizes"),
            (sweep("noshape.json", {"entries": [{"dtypes": "all"}]}), "needs shapes or a ladder"),
            (sweep("ladder.json", {"entries": [{"ladder": {"min_log2": 12, "max_log2": 10}}]}), "ladder needs"),
            (sweep("format.json", {"format": "other", "entries": [{"shapes": [shape]}]}), "format"),
            (sweep("output.json", {"entries": [{"shapes": [shape], "output_dtype": "int33"}]}),
             "entries[0]: output_dtype must be the name of a dtype"),
        ]
        for path, *expected in cases:
            with self.subTest(path=os.path.basename(path)):
                self.assert_usage_error(["--sweep", path], os.path.basename(path), *expected)
        # A pair outside the allowed list names both types (and the entry).
        narrowing = sweep("narrowing.json", {"entries": [{"shapes": [shape], "dtypes": ["float32"]},
                                                         {"shapes": [shape], "dtypes": ["float64"],
                                                          "output_dtype": "float32"}]})
        self.assert_usage_error(["--sweep", narrowing], "output dtype float32", "dtype float64", "entry 1")

    def test_help(self):
        result = run(["--help"])
        self.assertEqual(result.returncode, 0)
        for flag in ("--op", "--dtype", "--algo", "--shape", "--axis", "--direction", "--exclusive", "--sweep",
                     "--list", "--quick", "--output", "--device", "--min-samples", "--max-noise", "--time-limit",
                     "compare"):
            self.assertIn(flag, result.stdout)

    def test_list_runs_nothing(self):
        result = run(["--backend", "reference", "--list", "--shape", "64x32", "--axis", "0", "--op", "all",
                      "--dtype", "float32,int8", "--direction", "both", "--exclusive", "both"],
                     cwd=self.path(""))
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[-1], "16 cases")
        self.assertIn("prod/int8/64x32/axis0/packed/decreasing/exclusive/reference", result.stdout)
        self.assertEqual(os.listdir(self.path("")), [])

    def test_list_writes_the_cases_as_json(self):
        cases = self.path("cases.json")
        result = run(["--backend", "reference", "--list", "--quick", "--output", cases])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(cases) as f:
            document = json.load(f)
        self.assertEqual(document["format"], "tscan-bench-cases")
        names = [c["name"] for c in document["benchmarks"]]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(len(names), int(result.stdout.splitlines()[-1].split()[0]))

    def test_sweep_file_runs(self):
        path = self.path("sweep.json")
        with open(path, "w") as f:
            json.dump({"format": "tscan-bench-sweep", "format_version": 1, "entries": [
                {"class": "tiny", "shapes": [{"sizes": [16, 8], "axis": 0, "layout": "transposed"},
                                             {"sizes": [8, 4], "axis": 1, "input_strides": [-4, 1]}],
                 "dtypes": ["float16", "uint8"], "ops": "all", "exclusive": [True]},
                {"ladder": {"min_log2": 3, "max_log2": 5}}]}, f)
        result = run(["--backend", "reference", "--sweep", path, "--list"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("prod/uint8/8x4/axis1/in[-4,1]out[4,1]/increasing/exclusive/reference", result.stdout)
        self.assertIn("sum/float16/16x8/axis0/transposed/increasing/exclusive/reference", result.stdout)
        self.assertEqual(result.stdout.splitlines()[-1], "11 cases")


if __name__ == "__main__":
    unittest.main()
