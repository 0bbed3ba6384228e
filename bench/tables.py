#!/usr/bin/env python3
"""Markdown headline tables from a tscan-bench report (and optionally a peers.py report), as
results/README.md shows them: % of the same-run copy, increasing inclusive sums.

  1. float32, per shape class: AUTO (and the strategy it ran), the best single strategy, and
     each peer;
  2. AUTO per class and dtype;
  3. the cells of the target dtypes below --target, and the worst one.

    python3 bench/tables.py results/tscan-h100.json results/peers-h100.json
"""
import argparse
import sys

from plot import load, shape_text

TARGET_DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64"]
TABLE_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "int32", "int64"]
PEER_NAMES = {"torch": "PyTorch", "cupy": "CuPy"}


def headline_cases(reports):
    """{(class, dtype, strategy): case} for the timed increasing inclusive sums of the shape
    classes (not the ladder), and the classes in the order the first report lists them."""
    cells, classes = {}, []
    for _, report in reports:
        for case in report["benchmarks"]:
            if (case["op"] != "sum" or case["direction"] != "increasing" or case["exclusive"] or
                    case["class"] == "ladder" or "percent_of_copy" not in case):
                continue
            if case["class"] not in classes:
                classes.append(case["class"])
            cells[(case["class"], case["dtype"], case["strategy"])] = case
    return cells, classes


def cell(value):
    return "-" if value is None else f"{value:.1f}"


def float32_table(cells, classes, peers):
    lines = ["| class | shape, axis | AUTO (strategy it ran) | best single strategy | "
             + " | ".join(PEER_NAMES.get(p, p) for p in peers) + " |",
             "|---|---|---|---|" + "---|" * len(peers)]
    for cls in classes:
        auto = cells.get((cls, "float32", "auto"))
        singles = [c for (k, d, s), c in cells.items()
                   if k == cls and d == "float32" and s not in ("auto", "reference") and s not in peers]
        if not auto:
            continue
        best = max(singles, key=lambda c: c["percent_of_copy"], default=None)
        best_text = f"{best['strategy']} {best['percent_of_copy']:.1f}" if best else "-"
        peer_cells = [cell(cells[(cls, "float32", p)]["percent_of_copy"]) if (cls, "float32", p) in cells else "-"
                      for p in peers]
        lines.append(f"| {cls} | {shape_text(auto)} | **{auto['percent_of_copy']:.1f}** "
                     f"({auto.get('resolved_strategy', 'auto')}) | {best_text} | " + " | ".join(peer_cells) + " |")
    return lines


def dtype_table(cells, classes):
    lines = ["| class | " + " | ".join(TABLE_DTYPES) + " |", "|---|" + "---|" * len(TABLE_DTYPES)]
    for cls in classes:
        row = [cell(cells[(cls, d, "auto")]["percent_of_copy"]) if (cls, d, "auto") in cells else "-"
               for d in TABLE_DTYPES]
        lines.append(f"| {cls} | " + " | ".join(row) + " |")
    return lines


def below_target(cells, classes, target):
    """(percent, class, dtype) of AUTO's target-dtype cells under target, worst first."""
    misses = [(cells[(k, d, "auto")]["percent_of_copy"], k, d) for k in classes for d in TARGET_DTYPES
              if (k, d, "auto") in cells and cells[(k, d, "auto")]["percent_of_copy"] < target]
    return sorted(misses)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", help="a tscan-bench report, then optionally peers.py reports")
    parser.add_argument("--target", type=float, default=90.0, help="%% of the copy a cell should reach (90)")
    parser.add_argument("--worst", type=int, default=5, help="cells below the target listed by name, worst first (5)")
    args = parser.parse_args(argv)
    reports = load(args.reports)
    cells, classes = headline_cases(reports)
    if not classes:
        sys.exit("tables.py: no timed increasing inclusive sum of a shape class in the reports")
    strategies = {s for (_, _, s) in cells}
    peers = [p for p in PEER_NAMES if p in strategies]
    counted = sum(1 for k in classes for d in TARGET_DTYPES if (k, d, "auto") in cells)
    misses = below_target(cells, classes, args.target)
    out = ["## float32 sum, increasing, inclusive", ""] + float32_table(cells, classes, peers)
    out += ["", "## AUTO, sum, increasing, inclusive, every dtype of the sweep", ""] + dtype_table(cells, classes)
    out += ["", f"Target dtypes ({', '.join(TARGET_DTYPES)}): {len(misses)} of {counted} cells below "
            f"{args.target:g} %" + (":" if misses else ".")]
    out += [f"- {k} {d}: {p:.1f}" for p, k, d in misses[:args.worst]]
    if len(misses) > args.worst:
        out.append(f"- and {len(misses) - args.worst} more (the table above)")
    print("\n".join(out))


if __name__ == "__main__":
    main()
