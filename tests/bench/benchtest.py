"""What the tscan-bench suites share: where things are, running the driver, synthetic reports.

ctest sets TSCAN_BENCH (the driver), TSCAN_BENCH_WRONG_ANSWER (the LD_PRELOAD stand-in) and
TSCAN_SOURCE_DIR; run by hand, export them the same way.
"""
import copy
import json
import os
import subprocess
import tempfile
import unittest

BENCH = os.environ.get("TSCAN_BENCH", "")
SOURCE_DIR = os.environ.get("TSCAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCHEMA_PATH = os.path.join(SOURCE_DIR, "bench", "report.schema.json")
BENCH_DIR = os.path.join(SOURCE_DIR, "bench")


def run(args, env=None, cwd=None, timeout=600):
    """Runs tscan-bench with args (in cwd, by default a fresh scratch directory, so that a
    default report never lands in the source tree); returns the CompletedProcess (text)."""
    if not BENCH:
        raise unittest.SkipTest("TSCAN_BENCH is not set (run through ctest)")
    full_env = dict(os.environ)
    full_env.update(env or {})
    with tempfile.TemporaryDirectory(prefix="tscan-bench-cwd-") as scratch:
        return subprocess.run([BENCH] + list(args), capture_output=True, text=True, env=full_env,
                              cwd=cwd or scratch, timeout=timeout)


def no_gpu_env():
    """An environment in which CUDA sees no device, so that the driver takes its no-GPU path
    even on a machine with one."""
    return {"CUDA_VISIBLE_DEVICES": ""}


def schema_validator():
    import jsonschema  # pip package "jsonschema"
    with open(SCHEMA_PATH) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_errors(report):
    return [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
            for e in schema_validator().iter_errors(report)]


class TempDirCase(unittest.TestCase):
    """A test case with a scratch directory, self.path(name) inside it."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="tscan-bench-test-")
        self.addCleanup(self._tmp.cleanup)

    def path(self, name):
        return os.path.join(self._tmp.name, name)

    def write_json(self, name, document):
        path = self.path(name)
        with open(path, "w") as f:
            json.dump(document, f)
        return path


# ---- synthetic reports ------------------------------------------------------------------------

_BASE_REPORT = {
    "format": "tscan-bench-report",
    "format_version": 1,
    "context": {"date": "2025-01-01T00:00:00Z", "host_name": "test", "executable": "tscan-bench",
                "command_line": "tscan-bench", "num_cpus": 1, "library_version": "0.1.0",
                "library_build_type": "Release", "git_commit": None, "git_dirty": None,
                "cuda_runtime_version": None, "cuda_driver_version": None, "backend": "gpu",
                "timer": "cuda_event", "gpu_available": True, "gpu_unavailable_reason": None, "notes": []},
    "devices": [{"id": 0, "name": "Test GPU", "number_of_sms": 1, "l2_cache_size": 1, "global_memory_size": 1,
                 "ecc_state": None}],
    "settings": {"sweep": "default", "min_samples": 10, "max_noise_percent": 0.5, "time_limit_seconds": 0.5,
                 "warmup": 3, "seed": 1, "flush_bytes": 2, "check_full_limit_elements": 16777216,
                 "check_sample_elements": 1048576},
    "copies": [],
    "benchmarks": [],
    "summary": {"cases": 0, "passed": 0, "failed": 0, "skipped": 0, "walltime": 0.0},
}


def case(key, strategy="rows", median=None, noise=0.001, status=None, copy_median=None):
    """A report entry whose name has `key` in place of the shape: timed (median seconds,
    relative noise, the same-run copy's median: by default 0.5 ms whatever the case's, so that
    a change of the case's median is a change relative to the copy too) unless median is None,
    in which case it is skipped (or the given status)."""
    name = f"sum/float32/{key}/axis0/packed/increasing/inclusive/{strategy}"
    entry = {"name": name, "run_name": name, "class": "test", "op": "sum", "dtype": "float32",
             "output_dtype": "float32", "sizes": [1024], "input_strides": [1], "output_strides": [1], "axis": 0,
             "layout": "packed", "direction": "increasing", "exclusive": False, "strategy": strategy,
             "elements": 1024, "lines": 1, "line_length": 1024, "bytes_read": 4096, "bytes_written": 4096,
             "bytes_moved": 8192, "notes": []}
    if median is None:
        status = status or "skipped"
        entry.update(status=status, checked=False, skipped=status == "skipped",
                     skip_reason="not supported" if status == "skipped" else None,
                     error="wrong answer" if status == "failed" else None, error_occurred=True,
                     error_message="not supported" if status == "skipped" else "wrong answer")
        return entry
    entry.update(status="passed", checked=True, skipped=False, skip_reason=None, error=None, error_occurred=False,
                 check={"passed": True, "lines_total": 1, "lines_checked": 1, "elements_checked": 1024,
                        "mismatches": 0},
                 run_type="aggregate", aggregate_name="median", iterations=10, real_time=median * 1e9,
                 time_unit="ns", bytes_per_second=8192 / median, items_per_second=1024 / median,
                 time={"min": median, "q1": median, "median": median, "q3": median, "max": median, "mean": median,
                       "stdev_relative": noise, "samples": 10, "walltime": 10 * median, "stop_reason": "noise"},
                 copy={"bytes": 4096, "median": copy_median or 0.5e-3},
                 percent_of_copy=100.0 * (copy_median or 0.5e-3) / median)
    return entry


def report(*entries, backend="gpu", device="Test GPU"):
    document = copy.deepcopy(_BASE_REPORT)
    document["benchmarks"] = list(entries)
    document["context"]["backend"] = backend
    document["devices"][0]["name"] = device
    document["summary"].update(cases=len(entries), passed=sum(e["status"] == "passed" for e in entries),
                               failed=sum(e["status"] == "failed" for e in entries),
                               skipped=sum(e["status"] == "skipped" for e in entries))
    return document
