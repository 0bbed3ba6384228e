"""bench/tables.py: the headline tables of results/README.md from synthetic reports."""
import os
import subprocess
import sys
import unittest

from benchtest import BENCH_DIR, TempDirCase, case, report


def cell_case(cls, dtype, strategy, percent, resolved=None, **changes):
    entry = case(f"{cls}-{dtype}", strategy=strategy, median=1e-3)
    entry.update({"class": cls, "dtype": dtype, "percent_of_copy": percent, **changes})
    if resolved:
        entry["resolved_strategy"] = resolved
    return entry


class TablesTest(TempDirCase):
    def tables(self, *documents):
        paths = [self.write_json(f"r{i}.json", d) for i, d in enumerate(documents)]
        return subprocess.run([sys.executable, os.path.join(BENCH_DIR, "tables.py")] + paths,
                              capture_output=True, text=True, timeout=60)

    def row(self, stdout, first_cell, table=0):
        """The cells of the row starting with first_cell in the table-th table."""
        tables = [t for t in stdout.split("\n\n") if t.startswith("|")]
        for line in tables[table].splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == first_cell:
                return cells
        self.fail(f"no row {first_cell} in table {table}:\n{stdout}")

    def test_auto_best_single_and_peers(self):
        tscan = report(cell_case("wide", "float32", "auto", 91.04, resolved="lookback"),
                       cell_case("wide", "float32", "rows", 70.0), cell_case("wide", "float32", "lookback", 91.2),
                       cell_case("wide", "float16", "auto", 88.0, resolved="lookback"),
                       cell_case("wide", "float32", "auto", 50.0, op="prod"),
                       cell_case("ladder", "float32", "auto", 10.0))
        peers = report(cell_case("wide", "float32", "cupy", 11.0), cell_case("wide", "float32", "torch", 34.0))
        result = self.tables(tscan, peers)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.row(result.stdout, "class"),
                         ["class", "shape, axis", "AUTO (strategy it ran)", "best single strategy", "PyTorch", "CuPy"])
        self.assertEqual(self.row(result.stdout, "wide"),
                         ["wide", "1024 axis 0", "**91.0** (lookback)", "lookback 91.2", "34.0", "11.0"])
        self.assertEqual(self.row(result.stdout, "wide", table=1)[1:3], ["91.0", "88.0"])
        self.assertNotIn("ladder", result.stdout)
        self.assertIn("1 of 2 cells below 90 %", result.stdout)
        self.assertIn("- wide float16: 88.0", result.stdout)

    def test_cells_below_the_target_are_named_worst_first_up_to_worst(self):
        tscan = report(*[cell_case(f"c{i}", "float32", "auto", 80.0 + i) for i in range(4)])
        result = subprocess.run([sys.executable, os.path.join(BENCH_DIR, "tables.py"),
                                 self.write_json("r.json", tscan), "--worst", "2"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("4 of 4 cells below 90 %:\n- c0 float32: 80.0\n- c1 float32: 81.0\n- and 2 more", result.stdout)

    def test_no_headline_case_is_an_error(self):
        result = self.tables(report(cell_case("ladder", "float32", "auto", 10.0)))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no timed increasing inclusive sum", result.stderr)


if __name__ == "__main__":
    unittest.main()
