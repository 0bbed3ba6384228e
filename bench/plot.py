#!/usr/bin/env python3
"""PNG charts from tscan-bench reports (the driver's and bench/peers.py's), one selection of
dtype, operator, direction and exclusive form at a time:

  percent_of_copy-<selection>.png  percent of the same-run copy per shape class, a bar for
                                   each strategy and peer;
  ladder-<selection>.png           throughput (GB/s) against elements for the 1-D ladder,
                                   with the copy ceiling of the same bytes.

    python3 bench/plot.py tscan.json peers.json --out-dir plots [--dtype float32 --op sum]
"""
import argparse
import json
import os
import sys

# Bars in this order; anything else (peers first seen later) follows.
STRATEGY_ORDER = ["auto", "cub_device", "rows", "columns", "lookback", "stream", "reference", "torch", "cupy"]


def load(paths):
    reports = []
    for path in paths:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"plot.py: {path}: cannot read: {e}")
        if report.get("format") != "tscan-bench-report":
            sys.exit(f"plot.py: {path}: not a tscan-bench report")
        reports.append((path, report))
    return reports


def series_label(strategy, path, repeated):
    """The strategy, with the report's file name when two reports hold the same strategy."""
    return f"{strategy} ({os.path.basename(path)})" if repeated else strategy


def timed_cases(reports, args):
    """(label, case) for every timed case of the selection."""
    counts = {}
    for _, report in reports:
        for strategy in {c["strategy"] for c in report["benchmarks"]}:
            counts[strategy] = counts.get(strategy, 0) + 1
    selected = []
    for path, report in reports:
        for case in report["benchmarks"]:
            if ("time" in case and case["dtype"] == args.dtype and case["op"] == args.op and
                    case["direction"] == args.direction and case["exclusive"] == (args.exclusive == "yes")):
                selected.append((series_label(case["strategy"], path, counts[case["strategy"]] > 1), case))
    return selected


def ordered_labels(selected):
    def rank(label):
        strategy = label.split(" ")[0]
        return (STRATEGY_ORDER.index(strategy) if strategy in STRATEGY_ORDER else len(STRATEGY_ORDER), label)
    return sorted({label for label, _ in selected}, key=rank)


def shape_text(case):
    text = "x".join(str(s) for s in case["sizes"]) + f" axis {case['axis']}"
    return text if case["layout"] == "packed" else f"{text} {case['layout']}"


def colors_by_label(plt, selected):
    """One color per strategy or peer, the same in every chart (tab20: up to 20 distinct)."""
    palette = plt.get_cmap("tab20").colors
    return {label: palette[i % len(palette)] for i, label in enumerate(ordered_labels(selected))}


def plot_percent_of_copy(plt, selected, colors, path, title):
    groups = []  # (class, shape) in first-seen order; the ladder has its own chart
    values = {}
    for label, case in selected:
        if case["class"] == "ladder" or "percent_of_copy" not in case:
            continue
        group = (case["class"], shape_text(case))
        if group not in groups:
            groups.append(group)
        values[(group, label)] = case["percent_of_copy"]
    labels = [label for label in ordered_labels(selected) if any((g, label) in values for g in groups)]
    if not groups:
        return False
    width = 0.8 / max(len(labels), 1)
    figure, axes = plt.subplots(figsize=(min(20, 3 + len(groups) * (0.5 + 0.2 * len(labels))), 5.5))
    for i, label in enumerate(labels):
        xs = [g + (i - (len(labels) - 1) / 2) * width for g in range(len(groups)) if (groups[g], label) in values]
        ys = [values[(group, label)] for group in groups if (group, label) in values]
        axes.bar(xs, ys, width, label=label, color=colors[label])
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels([f"{cls}\n{shape}" for cls, shape in groups], rotation=45, ha="right", fontsize=8)
    axes.set_ylabel("% of a device-to-device copy of the same bytes")
    axes.axhline(100, color="gray", linewidth=0.8, linestyle="--")
    axes.set_title(title)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def plot_ladder(plt, reports, selected, colors, path, title):
    ladder = [(label, case) for label, case in selected if len(case["sizes"]) == 1 and case["layout"] == "packed"]
    if not ladder:
        return False
    figure, axes = plt.subplots(figsize=(8, 5))
    for label in ordered_labels(ladder):
        points = sorted((case["elements"], case["bytes_per_second"] / 1e9) for l, case in ladder if l == label)
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label, color=colors[label])
    # The ceiling: the first report's copy of each ladder case's tensor bytes (bytes_moved / 2).
    wanted = {case["bytes_moved"] // 2: case["elements"] for _, case in ladder}
    for path_, report in reports:
        copies = sorted((wanted[c["bytes"]], c["bytes_per_second"] / 1e9) for c in report.get("copies", [])
                        if c["bytes"] in wanted)
        if copies:
            axes.plot([c[0] for c in copies], [c[1] for c in copies], color="black", linestyle="--",
                      label=f"copy ({os.path.basename(path_)})")
            break
    axes.set_xscale("log", base=2)
    axes.set_xlabel("elements (1-D)")
    axes.set_ylabel("GB/s (bytes read + written / median time)")
    axes.set_title(title)
    axes.legend(fontsize=8)
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", help="tscan-bench or peers.py reports")
    parser.add_argument("--out-dir", default=".", help="where the PNGs go (default .)")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--op", default="sum", choices=["sum", "prod"])
    parser.add_argument("--direction", default="increasing", choices=["increasing", "decreasing"])
    parser.add_argument("--exclusive", default="no", choices=["no", "yes"])
    args = parser.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reports = load(args.reports)
    selected = timed_cases(reports, args)
    if not selected:
        sys.exit(f"plot.py: no timed case of {args.dtype} {args.op} {args.direction} exclusive={args.exclusive}")
    os.makedirs(args.out_dir, exist_ok=True)
    selection = f"{args.dtype}-{args.op}-{args.direction}-{'exclusive' if args.exclusive == 'yes' else 'inclusive'}"
    device = next((r["devices"][0]["name"] for _, r in reports if r.get("devices")), "host reference backend")
    colors = colors_by_label(plt, selected)
    written = []
    path = os.path.join(args.out_dir, f"percent_of_copy-{selection}.png")
    if plot_percent_of_copy(plt, selected, colors, path, f"{selection} on {device}"):
        written.append(path)
    path = os.path.join(args.out_dir, f"ladder-{selection}.png")
    if plot_ladder(plt, reports, selected, colors, path, f"1-D ladder, {selection} on {device}"):
        written.append(path)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
