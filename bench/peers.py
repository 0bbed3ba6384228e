#!/usr/bin/env python3
"""Times PyTorch's and CuPy's cumsum/cumprod on tscan-bench's cases, with tscan-bench's method.

The cases come from a tscan-bench report or case list (`tscan-bench --list --output
cases.json [flags]`). Each case is timed like the driver times tscan: warm-up calls, the L2
flushed before every sample (a write of twice the L2), CUDA events around the call alone, at
least --min-samples samples, stopping once the relative standard deviation is under
--max-noise or the per-case --time-limit is spent. The output is checked first, against a
float64 (integers: same-width modular) recomputation of sampled lines, exactly as tscan is:
the inputs make every correct float32-or-wider accumulation exact.

The report has tscan-bench's format (bench/REPORT.md), with strategy "torch" or "cupy" and
the same-run copy ceiling, so `tscan-bench compare` and bench/plot.py put peers beside tscan.
PyTorch (and CuPy, following NumPy) widen small integer cumsum/cumprod to 64 bits: the report
counts the bytes really moved (output_dtype, bytes_written) and says so in the case's notes.
Peers have no reverse or exclusive scan: those cases are recorded as skipped.

    python3 bench/peers.py --cases cases.json --output peers.json [--peers torch,cupy] [--resume]

With --resume, the cases already in --output are kept and only the others are timed: a long
run cut short by a time limit goes on where it stopped (each case draws its input from the
seed and its own index, so the data do not depend on where a run began).
"""
import argparse
import datetime
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time

# Fields of a case that describe it (the rest of a report's entry is a result).
DESCRIPTOR_FIELDS = ("name", "run_name", "class", "op", "dtype", "output_dtype", "sizes", "input_strides",
                     "output_strides", "axis", "layout", "direction", "exclusive", "strategy", "elements",
                     "lines", "line_length", "bytes_read", "bytes_written", "bytes_moved")
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
               "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8}
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
# What tscan-bench checks in full, and how much it samples above that (bench/data.h).
CHECK_FULL_LIMIT = 1 << 24
CHECK_SAMPLE_ELEMENTS = 1 << 20
REPORT_FORMAT = "tscan-bench-report"
CASE_FORMATS = (REPORT_FORMAT, "tscan-bench-cases")


class UsageError(Exception):
    """A bad argument or case file: exit status 2."""


# ---- cases --------------------------------------------------------------------------------

def case_key(case):
    """The case name without its strategy: what peers share with every tscan strategy."""
    suffix = "/" + case["strategy"]
    name = case["name"]
    return name[:-len(suffix)] if name.endswith(suffix) else name


def load_cases(path):
    """The distinct cases (one per key) of a tscan-bench report or case list."""
    try:
        with open(path) as f:
            document = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot read: {e}")
    if not isinstance(document, dict) or document.get("format") not in CASE_FORMATS:
        raise UsageError(f"{path}: not a tscan-bench report or case list")
    cases, seen = [], set()
    for entry in document.get("benchmarks", []):
        key = case_key(entry)
        if key not in seen:
            seen.add(key)
            cases.append({field: entry[field] for field in DESCRIPTOR_FIELDS})
    return document, cases


def choose_lines(lines, n, elements, rng):
    """Line numbers to check: all of them up to CHECK_FULL_LIMIT elements, else the first, the
    last and one random line from each of evenly spaced strata (bench/data.c's rule)."""
    import numpy as np
    if elements <= CHECK_FULL_LIMIT:
        return np.arange(lines)
    count = min(lines, max(2, -(-CHECK_SAMPLE_ELEMENTS // n)))
    low = np.arange(count, dtype=np.int64) * lines // count
    high = (np.arange(count, dtype=np.int64) + 1) * lines // count
    ids = low + (rng.random(count) * (high - low)).astype(np.int64)
    ids[0], ids[-1] = 0, lines - 1
    return ids


def make_input(case, rng):
    """The case's logical input as a NumPy array (bfloat16 as float32), by bench/data.h's rules:
    sums of +-1, +-2; float products of pairs (r, 1/r) along the axis, r a power of two in
    [1/2, 4], random signs; integer products of +-1, +-3. Every correct scan is then exact."""
    import numpy as np
    sizes, axis, dtype = case["sizes"], case["axis"], case["dtype"]
    host_dtype = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    pick = rng.integers(0, 4, size=sizes, dtype=np.int8)
    if case["op"] == "sum":
        return np.array([-2, -1, 1, 2]).astype(host_dtype)[pick]
    if dtype not in FLOAT_DTYPES:
        return np.array([-3, -1, 1, 3]).astype(host_dtype)[pick]
    n = sizes[axis]
    pair_sizes = list(sizes)
    pair_sizes[axis] = (n + 1) // 2
    r = np.array([0.5, 1.0, 2.0, 4.0])[rng.integers(0, 4, size=pair_sizes, dtype=np.int8)]
    r = np.take(np.repeat(r, 2, axis=axis), np.arange(n), axis=axis)
    odd = (np.arange(n) % 2 == 1).reshape([n if d == axis else 1 for d in range(len(sizes))])
    sign = np.where(pick & 1, -1.0, 1.0)
    return (sign * np.where(odd, 1.0 / r, r)).astype(host_dtype)


def round_to_bfloat16(values):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    import numpy as np
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & 1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def expected_lines(case, input_lines, output_dtype):
    """The exact answer for the lines, in the peer's output dtype (bfloat16 as float32)."""
    import numpy as np
    op = np.cumsum if case["op"] == "sum" else np.cumprod
    if output_dtype in FLOAT_DTYPES:
        exact = op(input_lines.astype(np.float64), axis=1)
        if output_dtype == "bfloat16":
            return round_to_bfloat16(exact.astype(np.float32))
        return exact.astype(np.dtype(output_dtype))
    wide = np.dtype(output_dtype)
    return op(input_lines.astype(wide), axis=1, dtype=wide)  # wraps modulo 2^bits, like the GPU


def compare_lines(expected, actual, ids, lines_total):
    """tscan-bench's check object for one case."""
    import numpy as np
    expected64 = expected.astype(np.float64)
    actual64 = actual.astype(np.float64)
    both_nan = np.isnan(expected64) & np.isnan(actual64)
    wrong = (expected != actual) & ~both_nan
    check = {"passed": not wrong.any(), "lines_total": lines_total, "lines_checked": int(len(ids)),
             "elements_checked": int(expected.size), "mismatches": int(wrong.sum())}
    if wrong.any():
        line, index = (int(v) for v in np.argwhere(wrong)[0])
        error = np.abs(expected64 - actual64)
        check["max_abs_error"] = float(np.nanmax(np.where(both_nan, 0.0, error)))
        check["first_mismatch"] = {"line": int(ids[line]), "index": index, "expected": repr(expected[line, index].item()),
                                   "actual": repr(actual[line, index].item())}
    return check


# ---- timing -------------------------------------------------------------------------------

def measure(sample, settings):
    """tscan-bench's loop (bench/stats.c): warm-up, then samples until the relative stdev is
    under max_noise (after min_samples) or the time limit is spent. sample() returns seconds."""
    import numpy as np
    for _ in range(settings["warmup"]):
        sample()
    samples, mean, m2 = [], 0.0, 0.0
    start = time.perf_counter()
    while True:
        seconds = sample()
        samples.append(seconds)
        n = len(samples)
        delta = seconds - mean
        mean += delta / n
        m2 += delta * (seconds - mean)
        if n < settings["min_samples"]:
            continue
        rsd = math.sqrt(m2 / (n - 1)) / mean if mean > 0 else 0.0
        if rsd < settings["max_noise"]:
            stop = "noise"
            break
        if time.perf_counter() - start >= settings["time_limit"]:
            stop = "time_limit"
            break
    walltime = time.perf_counter() - start
    values = np.array(samples)
    q1, median, q3 = np.percentile(values, [25, 50, 75])  # linear interpolation, as stats.c
    return {"min": float(values.min()), "q1": float(q1), "median": float(median), "q3": float(q3),
            "max": float(values.max()), "mean": mean, "stdev_relative": math.sqrt(m2 / (n - 1)) / mean,
            "samples": n, "walltime": walltime, "stop_reason": stop}


# ---- report -------------------------------------------------------------------------------

def timed_fields(time_stats, bytes_moved, items):
    """Google Benchmark's per-run fields, from the median (real_time in ns)."""
    fields = {"run_type": "aggregate", "aggregate_name": "median", "iterations": time_stats["samples"],
              "real_time": time_stats["median"] * 1e9, "time_unit": "ns",
              "bytes_per_second": bytes_moved / time_stats["median"]}
    if items:
        fields["items_per_second"] = items / time_stats["median"]
    return fields


def summaries(time_stats, bytes_moved, items, peak_bandwidth):
    """nvbench's cold-measurement tags, flattened (rates from the mean, as nvbench)."""
    mean = time_stats["mean"]
    tags = {"nv/cold/time/gpu/min": time_stats["min"], "nv/cold/time/gpu/max": time_stats["max"],
            "nv/cold/time/gpu/mean": mean, "nv/cold/time/gpu/stdev/relative": time_stats["stdev_relative"],
            "nv/cold/sample_size": time_stats["samples"], "nv/cold/walltime": time_stats["walltime"],
            "nv/cold/bw/item_rate": items / mean, "nv/cold/bw/global/bytes_per_second": bytes_moved / mean}
    if peak_bandwidth:
        tags["nv/cold/bw/global/utilization"] = bytes_moved / mean / peak_bandwidth
    return tags


def peer_record(case, peer, output_dtype=None, status="skipped", message=None, check=None, time_stats=None,
                copy_median=None, peak_bandwidth=None, notes=()):
    """One report entry for `peer` on `case` (a descriptor from load_cases)."""
    record = {field: case[field] for field in DESCRIPTOR_FIELDS}
    key = case_key(case)
    record.update(name=f"{key}/{peer}", run_name=f"{key}/{peer}", strategy=peer)
    if output_dtype:
        record["output_dtype"] = output_dtype
        record["bytes_written"] = case["elements"] * DTYPE_BYTES[output_dtype]
        record["bytes_moved"] = record["bytes_read"] + record["bytes_written"]
    record.update(status=status, checked=check is not None, skipped=status == "skipped",
                  skip_reason=message if status == "skipped" else None,
                  error=message if status == "failed" else None, error_occurred=message is not None)
    if message is not None:
        record["error_message"] = message
    if check is not None:
        record["check"] = check
    if time_stats is not None:
        record.update(timed_fields(time_stats, record["bytes_moved"], case["elements"]))
        record["time"] = time_stats
        record["summaries"] = summaries(time_stats, record["bytes_moved"], case["elements"], peak_bandwidth)
        if copy_median is not None:
            record["copy"] = {"bytes": record["bytes_moved"] // 2, "median": copy_median}
            record["percent_of_copy"] = 100.0 * copy_median / time_stats["median"]
    record["notes"] = list(notes)
    return record


def copy_record(nbytes, method, time_stats):
    record = {"name": f"copy/{nbytes}", "method": method, "bytes": nbytes, "bytes_moved": 2 * nbytes}
    record.update(timed_fields(time_stats, 2 * nbytes, 0))
    record["time"] = time_stats
    return record


def git_state():
    """(commit, dirty) of the tree this script is in; (None, None) without git or a repository.
    TSCAN_GIT_COMMIT and TSCAN_GIT_DIRTY (0 or 1) stand in for git, as for tscan-bench, where
    the tree travelled without .git."""
    if os.environ.get("TSCAN_GIT_COMMIT"):
        return os.environ["TSCAN_GIT_COMMIT"], os.environ.get("TSCAN_GIT_DIRTY", "") == "1"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        status = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, check=True).stdout
        return commit, bool(status.strip())
    except (OSError, subprocess.CalledProcessError):
        return None, None


def build_report(case_document, case_path, settings, flush_bytes, device, versions, runtime, driver, copies,
                 records, walltime, notes):
    case_context = case_document.get("context", {})
    commit, dirty = git_state()
    counts = {status: sum(r["status"] == status for r in records) for status in ("passed", "failed", "skipped")}
    return {
        "format": REPORT_FORMAT,
        "format_version": 1,
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host_name": socket.gethostname(), "executable": sys.argv[0],
            "command_line": " ".join(sys.argv), "num_cpus": os.cpu_count() or 1,
            "library_version": case_context.get("library_version", "unknown"),
            "library_build_type": case_context.get("library_build_type", "unknown"),
            "git_commit": commit, "git_dirty": dirty, "cuda_runtime_version": runtime,
            "cuda_driver_version": driver, "backend": "gpu", "timer": "cuda_event", "gpu_available": True,
            "gpu_unavailable_reason": None, "notes": list(notes), "peers": versions,
            "python_version": platform.python_version(),
        },
        "devices": [device],
        "settings": {"sweep": case_path, "device": settings["device"], "min_samples": settings["min_samples"],
                     "max_noise_percent": 100.0 * settings["max_noise"], "time_limit_seconds": settings["time_limit"],
                     "warmup": settings["warmup"], "seed": settings["seed"], "flush_bytes": flush_bytes,
                     "check_full_limit_elements": CHECK_FULL_LIMIT, "check_sample_elements": CHECK_SAMPLE_ELEMENTS,
                     "peers": settings["peers"]},
        "copies": copies,
        "benchmarks": records,
        "summary": dict(counts, cases=len(records), walltime=walltime),
    }


# ---- the peers ----------------------------------------------------------------------------

def version_text(version):
    """CUDA's integer version (12080) as "12.8"."""
    return f"{version // 1000}.{version % 1000 // 10}" if version else None


class TorchPeer:
    name = "torch"
    copy_method = "torch.Tensor.copy_"

    def __init__(self, device):
        import torch
        self.torch = torch
        torch.cuda.set_device(device)
        self.device = torch.device("cuda", device)
        self.version = torch.__version__
        self.dtypes = {name: getattr(torch, name, None) for name in DTYPE_BYTES}
        self.names = {dtype: name for name, dtype in self.dtypes.items() if dtype is not None}

    def unsupported(self, case):
        if self.dtypes.get(case["dtype"]) is None:
            return f"this torch has no {case['dtype']}"
        return None

    def upload(self, host, case, span, origin):
        torch = self.torch
        storage = torch.empty(span, dtype=self.dtypes[case["dtype"]], device=self.device)
        view = storage.as_strided(case["sizes"], case["input_strides"], origin)
        view.copy_(torch.from_numpy(host).to(self.device))  # bfloat16: the float32 host values convert exactly
        return view

    def scan(self, x, case):
        op = self.torch.cumsum if case["op"] == "sum" else self.torch.cumprod
        return op(x, dim=case["axis"])

    def output_dtype(self, y):
        return self.names[y.dtype]

    def lines_to_host(self, y, case, ids):
        n = case["line_length"]
        lines = y.movedim(case["axis"], -1).reshape(-1, n)[self.torch.from_numpy(ids).to(self.device)]
        if y.dtype == self.torch.bfloat16:
            lines = lines.float()
        return lines.cpu().numpy()

    def buffer(self, nbytes):
        return self.torch.empty(nbytes, dtype=self.torch.uint8, device=self.device)

    def fill(self, buffer, value):
        buffer.fill_(value)

    def copy(self, dst, src, nbytes):
        dst[:nbytes].copy_(src[:nbytes])  # a cudaMemcpyAsync for contiguous bytes

    def events(self):
        return self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)

    def elapsed(self, start, stop):
        stop.synchronize()
        return start.elapsed_time(stop) * 1e-3

    def range_push(self, text):
        self.torch.cuda.nvtx.range_push(text)

    def range_pop(self):
        self.torch.cuda.nvtx.range_pop()

    def release(self):
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()


class CupyPeer:
    name = "cupy"
    copy_method = "cudaMemcpyAsync"

    def __init__(self, device):
        import cupy
        self.cupy = cupy
        cupy.cuda.Device(device).use()
        self.version = cupy.__version__

    def unsupported(self, case):
        if case["dtype"] == "bfloat16":
            return "CuPy has no bfloat16"
        return None

    def upload(self, host, case, span, origin):
        cupy = self.cupy
        itemsize = host.dtype.itemsize
        storage = cupy.empty(span, dtype=host.dtype)
        view = cupy.lib.stride_tricks.as_strided(storage[origin:], shape=case["sizes"],
                                                 strides=[s * itemsize for s in case["input_strides"]])
        view[...] = cupy.asarray(host)
        return view

    def scan(self, x, case):
        op = self.cupy.cumsum if case["op"] == "sum" else self.cupy.cumprod
        return op(x, axis=case["axis"])

    def output_dtype(self, y):
        return y.dtype.name

    def lines_to_host(self, y, case, ids):
        lines = self.cupy.moveaxis(y, case["axis"], -1).reshape(-1, case["line_length"])
        return lines[self.cupy.asarray(ids)].get()

    def buffer(self, nbytes):
        return self.cupy.empty(nbytes, dtype=self.cupy.uint8)

    def fill(self, buffer, value):
        runtime = self.cupy.cuda.runtime
        runtime.memsetAsync(buffer.data.ptr, value, buffer.nbytes, self.cupy.cuda.get_current_stream().ptr)

    def copy(self, dst, src, nbytes):
        runtime = self.cupy.cuda.runtime
        runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, runtime.memcpyDeviceToDevice,
                            self.cupy.cuda.get_current_stream().ptr)

    def events(self):
        return self.cupy.cuda.Event(), self.cupy.cuda.Event()

    def elapsed(self, start, stop):
        stop.synchronize()
        return self.cupy.cuda.get_elapsed_time(start, stop) * 1e-3

    def range_push(self, text):
        self.cupy.cuda.nvtx.RangePush(text)

    def range_pop(self):
        self.cupy.cuda.nvtx.RangePop()

    def release(self):
        self.cupy.cuda.Device().synchronize()
        self.cupy.get_default_memory_pool().free_all_blocks()


PEERS = {"torch": TorchPeer, "cupy": CupyPeer}


# cudaDeviceAttr values (driver_types.h) that CuPy's properties no longer carry under CUDA 13.
CUDA_ATTRIBUTE_CLOCK_RATE = 13
CUDA_ATTRIBUTE_MEMORY_CLOCK_RATE = 36


def describe_device(device, peers):
    """nvbench's device fields, from CuPy when present (it reaches every attribute), else torch;
    fields a peer cannot tell are left out."""
    cupy_peer = next((p for p in peers if p.name == "cupy"), None)
    if cupy_peer:
        runtime = cupy_peer.cupy.cuda.runtime
        prop = runtime.getDeviceProperties(device)
        name = prop.get("name", b"unknown")
        memory_clock = 1000 * runtime.deviceGetAttribute(CUDA_ATTRIBUTE_MEMORY_CLOCK_RATE, device)
        bus_width = prop.get("memoryBusWidth", 0)
        return {"id": device, "name": name.decode() if isinstance(name, bytes) else name,
                "sm_version": 100 * prop.get("major", 0) + 10 * prop.get("minor", 0),
                "number_of_sms": prop.get("multiProcessorCount", 0),
                "sm_default_clock_rate": 1000 * runtime.deviceGetAttribute(CUDA_ATTRIBUTE_CLOCK_RATE, device),
                "global_memory_size": prop.get("totalGlobalMem", 0),
                "global_memory_bus_peak_clock_rate": memory_clock, "global_memory_bus_width": bus_width,
                "global_memory_bus_bandwidth": 2.0 * memory_clock * bus_width / 8.0,
                "l2_cache_size": prop.get("l2CacheSize", 0),
                "shared_memory_per_block": prop.get("sharedMemPerBlock", 0),
                "ecc_state": bool(prop["ECCEnabled"]) if "ECCEnabled" in prop else None}
    prop = peers[0].torch.cuda.get_device_properties(device)
    return {"id": device, "name": prop.name, "sm_version": 100 * prop.major + 10 * prop.minor,
            "number_of_sms": prop.multi_processor_count, "global_memory_size": prop.total_memory,
            "l2_cache_size": getattr(prop, "L2_cache_size", 0), "ecc_state": None}


def cuda_versions(peers):
    """(runtime, driver) versions as text; what the peers can tell."""
    for peer in peers:
        if peer.name == "cupy":
            runtime = peer.cupy.cuda.runtime
            return version_text(runtime.runtimeGetVersion()), version_text(runtime.driverGetVersion())
    return peers[0].torch.version.cuda, None


def view_span(case):
    """(elements spanned by the input view, offset of element (0,...,0)), as bench/run.c."""
    low = sum((s - 1) * st for s, st in zip(case["sizes"], case["input_strides"]) if st < 0)
    high = sum((s - 1) * st for s, st in zip(case["sizes"], case["input_strides"]) if st > 0)
    return high - low + 1, -low


class Runner:
    def __init__(self, peers, settings, device):
        self.peers = peers
        self.settings = settings
        self.copy_peer = next((p for p in peers if p.name == "cupy"), peers[0])
        self.flush_bytes = 2 * max(device["l2_cache_size"], 1 << 25)
        self.flush_buffers = {p.name: p.buffer(self.flush_bytes) for p in peers}
        self.flush_count = 0
        self.peak_bandwidth = device.get("global_memory_bus_bandwidth")
        self.copies = {}  # bytes -> time statistics

    def time_call(self, peer, call, label):
        """Samples of call() under the method: flush, event, the call alone, event."""
        start, stop = peer.events()
        flush = self.flush_buffers[peer.name]

        def sample():
            self.flush_count += 1
            peer.fill(flush, self.flush_count & 0xFF)
            start.record()
            peer.range_push(label)
            call()
            peer.range_pop()
            stop.record()
            return peer.elapsed(start, stop)
        return measure(sample, self.settings)

    def copy_median(self, nbytes):
        if nbytes not in self.copies:
            peer = self.copy_peer
            src, dst = peer.buffer(nbytes), peer.buffer(nbytes)
            self.copies[nbytes] = self.time_call(peer, lambda: peer.copy(dst, src, nbytes), "copy launch")
            del src, dst
            peer.release()
        return self.copies[nbytes]["median"]

    def run_case(self, peer, case, host, ids):
        reason = peer.unsupported(case)
        if case["direction"] != "increasing" or case["exclusive"]:
            reason = f"{peer.name} has no reverse or exclusive scan"
        elif any(s <= 0 for s in case["input_strides"]) or case["output_strides"] != packed_strides(case["sizes"]):
            reason = f"{peer.name} is timed on views with positive input strides and a packed output only"
        if reason:
            return peer_record(case, peer.name, message=reason)
        span, origin = view_span(case)
        try:
            x = peer.upload(host, case, span, origin)
            y = peer.scan(x, case)
            output_dtype = peer.output_dtype(y)
            actual = peer.lines_to_host(y, case, ids)
        except Exception as e:  # a dtype or layout the peer does not take
            peer.release()
            return peer_record(case, peer.name, message=f"{peer.name}: {type(e).__name__}: {e}".splitlines()[0])
        del y
        input_lines = host_lines(host, case, ids)
        check = compare_lines(expected_lines(case, input_lines, output_dtype), actual, ids, case["lines"])
        notes = []
        if output_dtype != case["dtype"]:
            notes.append(f"{peer.name} widens {case['dtype']} {case['op']} to {output_dtype}: bytes_written "
                         f"counts {output_dtype} elements")
        if not check["passed"]:
            notes.append("output differs from the exact answer; timed anyway, as the peer's speed is what is "
                         "compared")
        peer.range_push(case["name"])
        time_stats = self.time_call(peer, lambda: peer.scan(x, case), "scan launch")
        peer.range_pop()
        del x
        peer.release()
        bytes_moved = case["bytes_read"] + case["elements"] * DTYPE_BYTES[output_dtype]
        return peer_record(case, peer.name, output_dtype=output_dtype,
                           status="passed" if check["passed"] else "failed",
                           message=None if check["passed"] else
                           f"wrong answer: {check['mismatches']} of {check['elements_checked']} checked elements "
                           f"differ (max abs error {check['max_abs_error']:g})",
                           check=check, time_stats=time_stats, copy_median=self.copy_median(bytes_moved // 2),
                           peak_bandwidth=self.peak_bandwidth, notes=notes)


def packed_strides(sizes):
    strides, stride = [], 1
    for size in reversed(sizes):
        strides.insert(0, stride)
        stride *= size
    return strides


def host_lines(host, case, ids):
    """Lines `ids` of the logical host input, one per row, gathered without copying the rest."""
    import numpy as np
    other = [size for d, size in enumerate(case["sizes"]) if d != case["axis"]]
    if not other:
        return host.reshape(1, -1)[ids]
    return np.moveaxis(host, case["axis"], -1)[np.unravel_index(ids, other)]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True, help="a tscan-bench report or case list (--list --output)")
    parser.add_argument("--output", default="peers.json", help="report to write (default peers.json)")
    parser.add_argument("--peers", default="torch,cupy", help="comma list of torch, cupy (default both)")
    parser.add_argument("--min-samples", type=int, default=10)
    parser.add_argument("--max-noise", type=float, default=0.5, help="percent (default 0.5)")
    parser.add_argument("--time-limit", type=float, default=0.25, help="seconds per case (default 0.25)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0x5EED)
    parser.add_argument("--resume", action="store_true",
                        help="keep the cases already in --output and time only the others")
    args = parser.parse_args(argv)
    names = args.peers.split(",")
    if not names or any(name not in PEERS for name in names):
        parser.error(f"--peers: expected a comma list of {', '.join(PEERS)}, got '{args.peers}'")
    if args.min_samples < 2 or args.max_noise <= 0 or args.time_limit <= 0 or args.warmup < 0:
        parser.error("--min-samples must be >= 2, --max-noise and --time-limit positive, --warmup >= 0")
    args.peers = names
    return args


def main(argv=None):
    import numpy as np
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        document, cases = load_cases(args.cases)
    except UsageError as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return 2
    peers = []
    for name in args.peers:
        try:
            peers.append(PEERS[name](args.device))
        except Exception as e:
            print(f"peers.py: cannot use {name}: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
    settings = {"min_samples": args.min_samples, "max_noise": args.max_noise / 100.0,
                "time_limit": args.time_limit, "warmup": args.warmup, "seed": args.seed, "device": args.device,
                "peers": [p.name for p in peers]}
    device = describe_device(args.device, peers)
    runner = Runner(peers, settings, device)
    runtime, driver = cuda_versions(peers)
    records, kept_copies, start = [], [], time.perf_counter()
    notes = ["PyTorch and CuPy widen small integer cumsum/cumprod to 64 bits; bytes_written counts the "
             "elements they really write (see each case's output_dtype)"]
    if args.resume and os.path.exists(args.output):
        try:
            with open(args.output) as f:
                previous = json.load(f)
            records, kept_copies = list(previous["benchmarks"]), list(previous["copies"])
        except (OSError, ValueError, KeyError) as e:
            print(f"peers.py: --resume: cannot read {args.output}: {e}", file=sys.stderr)
            return 2
        notes.append("resumed: cases from more than one run; each case's percent_of_copy uses the copy "
                     "timed in its own run")
    done = {r["name"] for r in records}

    def save():
        # Rewritten after every case, so a run cut short still leaves a valid report of what it timed.
        copies = [copy_record(nbytes, runner.copy_peer.copy_method, stats) for nbytes, stats in runner.copies.items()]
        copies += [c for c in kept_copies if c["bytes"] not in runner.copies]
        report = build_report(document, args.cases, settings, runner.flush_bytes, device,
                              {p.name: p.version for p in peers}, runtime, driver, copies, records,
                              time.perf_counter() - start, notes)
        with open(args.output + ".partial", "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        os.replace(args.output + ".partial", args.output)

    save()
    for index, case in enumerate(cases):
        if all(f"{case_key(case)}/{peer.name}" in done for peer in peers):
            continue
        rng = np.random.default_rng((args.seed, index))
        # Peers take only increasing inclusive scans: the others are skipped without an input.
        runnable = case["direction"] == "increasing" and not case["exclusive"]
        host = make_input(case, rng) if runnable else None
        ids = choose_lines(case["lines"], case["line_length"], case["elements"], rng)
        for peer in peers:
            record = runner.run_case(peer, case, host, ids)
            records.append(record)
            shown = f"{record['time']['median'] * 1e3:.3f} ms, {record['percent_of_copy']:.1f}% of copy" \
                if "time" in record else record["status"] + ": " + (record.get("error_message") or "")
            print(f"[{index + 1}/{len(cases)}] {record['name']}: {shown}", flush=True)
        del host
        save()
    wrong = [r["name"] for r in records if r["status"] == "failed"]
    print(f"peers.py: {len(records)} cases, {len(wrong)} with outputs that differ from the exact answer; "
          f"report written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
