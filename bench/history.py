#!/usr/bin/env python3
"""history.py - tscan-bench reports over time: series, change points, what regressed.

    python3 bench/history.py seed --git results/tscan-h100.json --out DIR
        every committed version of a report in git history, one file per version
    python3 bench/history.py build DIR --html history.html --summary history.md
                                       [--spread-out spread.json]
        one self-contained offline page (inline SVG drawn by inline JS, no network), a markdown
        summary for CI logs and, optionally, per-case run-to-run spreads for `tscan-bench compare
        --spread`

The standard library only, so that a CI job or a laptop runs it without installing anything.
A series is a case's median relative to the same-run copy of its bytes (which cancels the
machine's bandwidth of that night), ordered by the report's date; a class's series is the
geometric mean of its AUTO cases' % of copy. Change points come from a penalised least-squares
segmentation of the log series (optimal partitioning by dynamic programming), not from
pairwise compares. Exit status: 0, 2 on a usage error or an unreadable report.
"""
import argparse
import gzip
import html
import json
import math
import os
import subprocess
import sys

REPORT_FORMAT = "tscan-bench-report"
SPREAD_FORMAT = "tscan-bench-spread"
# A step smaller than this (relative) is not reported: the sweeps' own spread near the copy
# reaches 1-3 % (bench/NOTES.md, "Run-to-run spread").
MIN_STEP = 0.03
# The noise estimate never goes below this (log units): a series of identical values would
# otherwise make every wiggle a step.
MIN_SIGMA = 0.003
# Penalty per change point, in units of sigma^2 * log(n) (BIC-like).
PENALTY = 3.0
# A spread for `compare --spread`: this many sigmas of the within-segment residuals, at least
# the floor, from at least this many points; and at least the case's largest step under
# SHIFT_LIMIT, since unchanged code was seen to shift by up to 5.2 % between two sweeps of one
# machine (bench/NOTES.md): such a step may have been the machine.
SPREAD_SIGMAS = 4.0
SPREAD_FLOOR = 0.02
SPREAD_MIN_POINTS = 5
SHIFT_LIMIT = 0.06
# Cases under a quarter of the copy's speed flip between levels 7-17 % apart with unchanged
# code (rows on strided axes, columns on 1-D lines): their spread stays compare's off-copy
# default, whatever their residuals say.
OFF_COPY_PERCENT = 25.0
OFF_COPY_SPREAD = 0.20


class UsageError(Exception):
    pass


# ---- reading reports -----------------------------------------------------------------------

def read_report(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            document = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot read a JSON report: {e}")
    if not isinstance(document, dict) or document.get("format") != REPORT_FORMAT:
        raise UsageError(f"{path}: not a tscan-bench report (\"format\" is {document.get('format')!r})"
                         if isinstance(document, dict) else f"{path}: not a tscan-bench report")
    return document


def run_point(path, document):
    """What one report contributes: its commit, date, device and the copy-relative time of
    every case timed beside a copy."""
    context = document.get("context") or {}
    devices = document.get("devices") or [{}]
    cases = {}
    for entry in document.get("benchmarks") or []:
        copy = (entry.get("copy") or {}).get("median")
        median = (entry.get("time") or {}).get("median")
        if entry.get("status") == "passed" and copy and median and copy > 0 and median > 0:
            cases[entry["name"]] = {"ratio": median / copy, "class": entry.get("class", "custom"),
                                    "strategy": entry.get("strategy", "")}
    return {"file": os.path.basename(path), "commit": context.get("git_commit") or "",
            "date": context.get("date") or "", "device": devices[0].get("name") if devices else None,
            "cases": cases}


def load_directory(directory):
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        raise UsageError(f"{directory}: cannot list: {e}")
    points = [run_point(os.path.join(directory, n), read_report(os.path.join(directory, n)))
              for n in names if n.endswith(".json") or n.endswith(".json.gz")]
    if not points:
        raise UsageError(f"{directory}: holds no report (*.json, *.json.gz)")
    # One point per run: the same sweep committed twice (a report and its archive) counts once.
    unique = {}
    for p in points:
        unique.setdefault((p["commit"], p["date"]), p)
    points = sorted(unique.values(), key=lambda p: (p["date"], p["file"]))
    devices = {p["device"] for p in points if p["device"]}
    if len(devices) > 1:
        raise UsageError(f"{directory}: reports from different GPUs ({', '.join(sorted(devices))}): "
                         "keep one directory per GPU")
    return points


# ---- the step detector ---------------------------------------------------------------------

def robust_sigma(values):
    """The noise of a series from its first differences (a step moves one difference only):
    MAD / 0.6745 / sqrt(2)."""
    diffs = sorted(abs(b - a) for a, b in zip(values, values[1:]))
    if not diffs:
        return MIN_SIGMA
    mid = len(diffs) // 2
    mad = diffs[mid] if len(diffs) % 2 else (diffs[mid - 1] + diffs[mid]) / 2
    return max(MIN_SIGMA, mad / 0.6745 / math.sqrt(2))


def segment(values, penalty=None):
    """Change points of `values` (indices where a new segment starts): the partition that
    minimises the within-segment sum of squares plus `penalty` per change (optimal partitioning,
    O(n^2)); then steps under MIN_STEP are merged away, smallest first."""
    n = len(values)
    if n < 2:
        return []
    if penalty is None:
        penalty = PENALTY * robust_sigma(values) ** 2 * math.log(n)
    prefix, prefix_sq = [0.0], [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
        prefix_sq.append(prefix_sq[-1] + v * v)

    def cost(i, j):  # values[i:j]
        s = prefix[j] - prefix[i]
        return prefix_sq[j] - prefix_sq[i] - s * s / (j - i)

    best, last = [0.0] + [math.inf] * n, [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + cost(i, j) + (penalty if i else 0.0)
            if c < best[j]:
                best[j], last[j] = c, i
    points, j = [], n
    while j:
        if last[j]:
            points.append(last[j])
        j = last[j]
    points.sort()
    while points:
        bounds = [0] + points + [n]
        means = [(prefix[b] - prefix[a]) / (b - a) for a, b in zip(bounds, bounds[1:])]
        jumps = [abs(math.expm1(b - a)) for a, b in zip(means, means[1:])]
        smallest = min(range(len(jumps)), key=jumps.__getitem__)
        if jumps[smallest] >= MIN_STEP:
            break
        del points[smallest]
    return points


def segment_means(values, points):
    bounds = [0] + points + [len(values)]
    return [(a, b, sum(values[a:b]) / (b - a)) for a, b in zip(bounds, bounds[1:])]


def analyse(index, values, label):
    """Steps, segment levels and residual spread of one series of log copy-relative times
    (`index`: the run index of each value)."""
    points = segment(values)
    segments = segment_means(values, points)
    steps = []
    for (a0, b0, before), (a1, _, after) in zip(segments, segments[1:]):
        steps.append({"series": label, "run": index[a1], "previous_run": index[b0 - 1],
                      "change": math.expm1(after - before)})
    residuals = sorted(abs(values[i] - m) for a, b, m in segments for i in range(a, b))
    sigma = 1.4826 * residuals[len(residuals) // 2] if residuals else 0.0
    return {"points": [index[p] for p in points], "levels": [[index[a], index[b - 1], m] for a, b, m in segments],
            "steps": steps, "sigma": sigma}


# ---- the analysis --------------------------------------------------------------------------

def build(points):
    runs = [{"commit": p["commit"], "date": p["date"], "file": p["file"]} for p in points]
    names = sorted({name for p in points for name in p["cases"]})
    cases = {}
    for name in names:
        index = [i for i, p in enumerate(points) if name in p["cases"]]
        logs = [math.log(points[i]["cases"][name]["ratio"]) for i in index]
        info = points[index[-1]]["cases"][name]
        result = analyse(index, logs, name)
        best = min(m for _, _, m in result["levels"])
        result.update({"class": info["class"], "strategy": info["strategy"], "runs": index,
                       "percent_of_copy": [round(100.0 / math.exp(v), 3) for v in logs],
                       "since_best": math.expm1(result["levels"][-1][2] - best)})
        cases[name] = result
    classes = {}
    for cls in sorted({c["class"] for c in cases.values() if c["strategy"] == "auto"}):
        index, logs = [], []
        for i, p in enumerate(points):
            member = [math.log(c["ratio"]) for c in p["cases"].values() if c["class"] == cls and c["strategy"] == "auto"]
            if member:
                index.append(i)
                logs.append(sum(member) / len(member))
        result = analyse(index, logs, cls)
        result.update({"runs": index, "percent_of_copy": [round(100.0 / math.exp(v), 3) for v in logs]})
        classes[cls] = result
    return {"format": "tscan-bench-history", "format_version": 1, "runs": runs, "classes": classes,
            "cases": cases, "device": next((p["device"] for p in points if p["device"]), None)}


def case_spread(c):
    if c["percent_of_copy"][-1] < OFF_COPY_PERCENT:
        return OFF_COPY_SPREAD
    return max([SPREAD_FLOOR, SPREAD_SIGMAS * c["sigma"]] +
               [abs(s["change"]) for s in c["steps"] if abs(s["change"]) < SHIFT_LIMIT])


def spreads(history):
    return {"format": SPREAD_FORMAT, "format_version": 1,
            "source": f"bench/history.py over {len(history['runs'])} runs",
            "cases": {name: round(case_spread(c), 4) for name, c in history["cases"].items() if len(c["runs"]) >= SPREAD_MIN_POINTS}}


def regressed(history, limit=MIN_STEP):
    rows = [(c["since_best"], name) for name, c in history["cases"].items() if c["since_best"] > limit]
    return sorted(rows, reverse=True)


# ---- output --------------------------------------------------------------------------------

def run_label(history, i):
    """A run's commit, or for a report without one the file it came from."""
    run = history["runs"][i]
    return run["commit"][:7] or run["file"].split(".json")[0][-16:]


def markdown(history, top=30):
    runs = history["runs"]
    out = [f"## tscan-bench history: {len(runs)} runs, {runs[0]['date']} to {runs[-1]['date']}"
           f"{' on ' + history['device'] if history['device'] else ''}", ""]
    out += ["### Steps per class (AUTO, % of copy)", "", "| class | at commit | date | change of time |",
            "|---|---|---|---:|"]
    for cls, c in history["classes"].items():
        for s in c["steps"]:
            out.append(f"| {cls} | {run_label(history, s['run'])} | {runs[s['run']]['date']} | "
                       f"{100 * s['change']:+.1f}% |")
    steps = sum(len(c["steps"]) for c in history["cases"].values())
    rows = regressed(history)
    out += ["", f"{steps} steps in {len(history['cases'])} case series. "
            f"{len(rows)} cases slower now than at their best by more than {100 * MIN_STEP:g}%"
            f"{' (the first ' + str(top) + ' below)' if len(rows) > top else ''}:", "",
            "| case | since best | best at | now |", "|---|---:|---|---|"]
    for change, name in rows[:top]:
        c = history["cases"][name]
        best = min(c["levels"], key=lambda level: level[2])
        out.append(f"| {name} | {100 * change:+.1f}% | {run_label(history, best[0])} | "
                   f"{run_label(history, c['levels'][-1][0])} |")
    return "\n".join(out) + "\n"


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tscan-bench history</title>
<style>
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:24px}
.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}
.chart{border:1px solid #ddd;padding:4px}.chart b{font-size:12px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
td.n{text-align:right}input{width:420px}
</style></head><body>
<h1>tscan-bench history</h1>
<p id="headline"></p>
<p>Each series is % of the same-run copy of the same bytes (higher is better; the machine's
bandwidth of the night cancels). Grey: the runs; blue: the segment levels found by a penalised
least-squares step detector; red marks and labels: the commit at each step.</p>
<h2>Classes (geometric mean of the AUTO cases)</h2><div class="grid" id="classes"></div>
<h2>Steps per class</h2><table id="class-steps"></table>
<h2>Regressed since the best</h2><table id="regressed"></table>
<h2>Cases</h2>
<p><input id="filter" placeholder="filter: part of a case name, e.g. float16/16384x16384 or /auto">
<span id="count"></span></p><div class="grid" id="cases"></div>
<script type="application/json" id="history-data">__DATA__</script>
<script>
"use strict";
const H = JSON.parse(document.getElementById("history-data").textContent);
const runs = H.runs, label = i => runs[i].commit ? runs[i].commit.slice(0, 7) : runs[i].file.split(".json")[0].slice(-16);
const pct = x => (x >= 0 ? "+" : "") + (100 * x).toFixed(1) + "%";
function el(tag, attrs, text) {
  const ns = "http://www.w3.org/2000/svg", e = ["svg","path","circle","text","line","polyline"].includes(tag)
    ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function chart(title, s) {
  const W = 420, Hh = 170, L = 36, R = 8, T = 8, B = 22, box = el("div", {class: "chart"});
  box.appendChild(el("b", {}, title));
  const svg = el("svg", {width: W, height: Hh, viewBox: `0 0 ${W} ${Hh}`});
  const ys = s.percent_of_copy, lo = Math.min(...ys), hi = Math.max(...ys), pad = Math.max(1, (hi - lo) * 0.1);
  const y0 = lo - pad, y1 = hi + pad, n = runs.length;
  const X = i => L + (W - L - R) * (n > 1 ? i / (n - 1) : 0.5), Y = v => T + (Hh - T - B) * (1 - (v - y0) / (y1 - y0));
  for (const v of [y0 + pad, (y0 + y1) / 2, y1 - pad]) {
    svg.appendChild(el("line", {x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: "#eee"}));
    svg.appendChild(el("text", {x: 2, y: Y(v) + 4, "font-size": 10}, v.toFixed(1)));
  }
  svg.appendChild(el("polyline", {points: s.runs.map((r, k) => X(r) + "," + Y(ys[k])).join(" "),
                                  fill: "none", stroke: "#bbb"}));
  s.runs.forEach((r, k) => svg.appendChild(el("circle", {cx: X(r), cy: Y(ys[k]), r: 2, fill: "#888"})));
  for (const [a, b, m] of s.levels)
    svg.appendChild(el("line", {x1: X(a), x2: X(b), y1: Y(100 / Math.exp(m)), y2: Y(100 / Math.exp(m)),
                                stroke: "#1565c0", "stroke-width": 2}));
  s.steps.forEach((st, k) => {
    const x = (X(st.run) + X(st.previous_run)) / 2;
    svg.appendChild(el("line", {x1: x, x2: x, y1: T, y2: Hh - B, stroke: "#d32f2f", "stroke-dasharray": "3,2"}));
    svg.appendChild(el("text", {x: x + 2, y: T + 10 + 11 * (k % 3), "font-size": 10, fill: "#d32f2f"},
                       label(st.run) + " " + pct(-st.change / (1 + st.change))));
  });
  svg.appendChild(el("text", {x: L, y: Hh - 6, "font-size": 10}, label(0) + " " + runs[0].date.slice(0, 10)));
  svg.appendChild(el("text", {x: W - R, y: Hh - 6, "font-size": 10, "text-anchor": "end"},
                     label(n - 1) + " " + runs[n - 1].date.slice(0, 10)));
  box.appendChild(svg);
  return box;
}
function row(table, cells, head) {
  const tr = el("tr");
  cells.forEach(c => { const td = el(head ? "th" : "td", typeof c === "number" ? {class: "n"} : {}, c); tr.appendChild(td); });
  table.appendChild(tr);
}
document.getElementById("headline").textContent = `${runs.length} runs from ${runs[0].date} to ` +
  `${runs[runs.length - 1].date}${H.device ? " on " + H.device : ""}; ${Object.keys(H.cases).length} case series.`;
const classes = document.getElementById("classes"), steps = document.getElementById("class-steps");
row(steps, ["class", "at commit", "date", "% of copy change"], true);
for (const [name, s] of Object.entries(H.classes)) {
  classes.appendChild(chart(name, s));
  for (const st of s.steps) row(steps, [name, label(st.run), runs[st.run].date, pct(-st.change / (1 + st.change))]);
}
const reg = document.getElementById("regressed");
row(reg, ["case", "time since its best", "best at", "now at"], true);
Object.entries(H.cases).filter(([, c]) => c.since_best > H.min_step).sort((a, b) => b[1].since_best - a[1].since_best)
  .forEach(([name, c]) => {
    const best = c.levels.reduce((a, b) => (b[2] < a[2] ? b : a));
    row(reg, [name, pct(c.since_best), label(best[0]), label(c.levels[c.levels.length - 1][0])]);
  });
function showCases() {
  const f = document.getElementById("filter").value, box = document.getElementById("cases");
  const names = Object.keys(H.cases).filter(n => (f ? n.includes(f) : H.cases[n].steps.length > 0));
  box.replaceChildren(...names.slice(0, 60).map(n => chart(n, H.cases[n])));
  document.getElementById("count").textContent = `${names.length} cases${f ? "" : " with a step"}` +
    (names.length > 60 ? ", the first 60 drawn" : "");
}
document.getElementById("filter").addEventListener("input", showCases);
showCases();
</script></body></html>
"""


def page(history):
    data = dict(history, min_step=MIN_STEP)
    # One line per element: the page is an output, not a second copy of this source to read.
    compact = " ".join(line.strip() for line in PAGE.splitlines())
    # "</" inside a script element would end it early.
    return compact.replace("__DATA__", json.dumps(data, separators=(",", ":")).replace("</", "<\\/")) + "\n"


# ---- commands ------------------------------------------------------------------------------

def seed(args):
    repo = args.repo
    try:
        commits = subprocess.run(["git", "-C", repo, "log", "--format=%H", "--", args.git], check=True,
                                 capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        raise UsageError(f"git log of {args.git} in {repo} failed: {getattr(e, 'stderr', e)}")
    os.makedirs(args.out, exist_ok=True)
    written = 0
    for commit in commits:
        shown = subprocess.run(["git", "-C", repo, "show", f"{commit}:{args.git}"], capture_output=True)
        if shown.returncode:  # the commit deleted or moved the file
            continue
        with open(os.path.join(args.out, f"{commit[:12]}.json"), "wb") as f:
            f.write(shown.stdout)
        written += 1
    print(f"history.py: {written} versions of {args.git} (of {len(commits)} commits touching it) in {args.out}")


def build_command(args):
    history = build(load_directory(args.directory))
    for path, text in ((args.html, page(history)), (args.summary, markdown(history)),
                       (args.spread_out, args.spread_out and json.dumps(spreads(history), indent=1) + "\n")):
        if path:
            with open(path, "w") as f:
                f.write(text)
    print(markdown(history), end="")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("seed", help="every committed version of a report, from git history")
    s.add_argument("--git", required=True, help="the report's path in the repository")
    s.add_argument("--out", required=True, help="directory to write the versions to")
    s.add_argument("--repo", default=".", help="the repository (default: the current directory)")
    b = sub.add_parser("build", help="page, summary and spreads from a directory of reports")
    b.add_argument("directory")
    b.add_argument("--html", help="the page to write")
    b.add_argument("--summary", help="the markdown summary to write (it is printed too)")
    b.add_argument("--spread-out", help="per-case spreads for tscan-bench compare --spread")
    args = parser.parse_args(argv)
    try:
        (seed if args.command == "seed" else build_command)(args)
    except UsageError as e:
        print(f"history.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
