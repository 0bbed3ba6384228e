"""bench/peers.py without a GPU: its method, check and report, with NumPy standing in for a peer.

The stand-in behaves as PyTorch does where it matters here: cumsum/cumprod widen small
integers to 64 bits, and it has no bfloat16. Needs the pip package numpy.
"""
import importlib.util
import json
import time
import unittest

from benchtest import BENCH_DIR, TempDirCase, run, schema_errors

try:
    import numpy as np
except ImportError:  # pragma: no cover - CI installs numpy
    np = None


def load_peers_module():
    spec = importlib.util.spec_from_file_location("peers", f"{BENCH_DIR}/peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class HostEvent:
    def record(self):
        self.at = time.perf_counter()


class NumpyPeer:
    """The peer interface of bench/peers.py, on host memory."""
    name = "torch"
    copy_method = "cudaMemcpyAsync"
    version = "numpy stand-in"

    def __init__(self, device):
        self.device = device

    def unsupported(self, case):
        return "NumPy has no bfloat16" if case["dtype"] == "bfloat16" else None

    def upload(self, host, case, span, origin):
        storage = np.empty(span, dtype=host.dtype)
        view = np.lib.stride_tricks.as_strided(storage[origin:], shape=case["sizes"],
                                               strides=[s * host.dtype.itemsize for s in case["input_strides"]])
        view[...] = host
        return view

    def scan(self, x, case):
        return (np.cumsum if case["op"] == "sum" else np.cumprod)(x, axis=case["axis"])

    def output_dtype(self, y):
        return y.dtype.name

    def lines_to_host(self, y, case, ids):
        return np.moveaxis(y, case["axis"], -1).reshape(-1, case["line_length"])[ids]

    def buffer(self, nbytes):
        return np.empty(nbytes, dtype=np.uint8)

    def fill(self, buffer, value):
        buffer.fill(value)

    def copy(self, dst, src, nbytes):
        dst[:nbytes] = src[:nbytes]

    def events(self):
        return HostEvent(), HostEvent()

    def elapsed(self, start, stop):
        return stop.at - start.at

    def range_push(self, text):
        pass

    def range_pop(self):
        pass

    def release(self):
        pass


@unittest.skipIf(np is None, "needs the pip package numpy")
class PeersTest(TempDirCase):
    def setUp(self):
        super().setUp()
        self.peers = load_peers_module()
        self.peers.PEERS = {"torch": NumpyPeer}
        self.peers.describe_device = lambda device, peers: {
            "id": device, "name": "host stand-in", "number_of_sms": 1, "l2_cache_size": 1 << 20,
            "global_memory_size": 1 << 30, "ecc_state": None}
        self.peers.cuda_versions = lambda peers: (None, None)

    def run_peers(self, *bench_args, resume=False):
        cases = self.path("cases.json")
        listed = run(["--backend", "reference", "--list", "--output", cases] + list(bench_args))
        self.assertEqual(listed.returncode, 0, listed.stderr)
        output = self.path("peers.json")
        status = self.peers.main(["--cases", cases, "--output", output, "--peers", "torch", "--time-limit", "0.01",
                                  "--min-samples", "3", "--warmup", "1"] + (["--resume"] if resume else []))
        self.assertEqual(status, 0)
        with open(output) as f:
            return json.load(f)

    def test_report_matches_the_schema_and_counts_widened_bytes(self):
        report = self.run_peers("--shape", "64x40", "--axis", "0", "--shape", "30x20", "--layout", "padded",
                                "--axis", "1", "--dtype", "float32,float16,bfloat16,int8,uint16,int64",
                                "--op", "all", "--exclusive", "both")
        self.assertEqual(schema_errors(report), [])
        by_name = {b["name"]: b for b in report["benchmarks"]}
        self.assertTrue(all(name.endswith("/torch") for name in by_name))

        widened = by_name["sum/int8/64x40/axis0/packed/increasing/inclusive/torch"]
        self.assertEqual(widened["status"], "passed", widened)
        self.assertEqual(widened["output_dtype"], "int64")
        self.assertEqual(widened["bytes_moved"], 64 * 40 * (1 + 8))
        self.assertEqual(widened["copy"]["bytes"], 64 * 40 * 9 // 2)
        self.assertIn("widens int8 sum to int64", widened["notes"][0])

        product = by_name["prod/float16/30x20/axis1/padded/increasing/inclusive/torch"]
        self.assertEqual(product["status"], "passed", product)
        self.assertEqual(product["input_strides"], [21, 1])
        self.assertEqual(product["bytes_moved"], 2 * 30 * 20 * 2)

        exclusive = by_name["sum/float32/64x40/axis0/packed/increasing/exclusive/torch"]
        self.assertEqual(exclusive["status"], "skipped")
        self.assertIn("no reverse or exclusive", exclusive["skip_reason"])
        self.assertEqual(by_name["sum/bfloat16/64x40/axis0/packed/increasing/inclusive/torch"]["skip_reason"],
                         "NumPy has no bfloat16")
        self.assertEqual(report["context"]["peers"], {"torch": "numpy stand-in"})
        copies = {c["bytes"] for c in report["copies"]}
        self.assertTrue(all(b["copy"]["bytes"] in copies for b in by_name.values() if "copy" in b))

    def test_inaccurate_output_is_reported_and_still_timed(self):
        real_scan = NumpyPeer.scan

        def half_precision_accumulation(peer, x, case):
            y = real_scan(peer, x, case)
            if y.dtype == np.float16:
                y = y.copy()
                y.flat[-1] += np.float16(1)
            return y
        NumpyPeer.scan = half_precision_accumulation
        self.addCleanup(setattr, NumpyPeer, "scan", real_scan)
        report = self.run_peers("--shape", "256", "--dtype", "float16,float32")
        self.assertEqual(schema_errors(report), [])
        by_dtype = {b["dtype"]: b for b in report["benchmarks"] if b["op"] == "sum" and b["status"] != "skipped"}
        wrong = by_dtype["float16"]
        self.assertEqual(wrong["status"], "failed")
        self.assertEqual(wrong["check"]["mismatches"], 1)
        self.assertEqual(wrong["check"]["first_mismatch"]["index"], 255)
        self.assertIn("time", wrong)
        self.assertEqual(by_dtype["float32"]["status"], "passed")

    def test_resume_keeps_what_was_timed_and_times_the_rest(self):
        first = self.run_peers("--shape", "64x40", "--dtype", "float32", "--op", "sum", "--exclusive", "no",
                               "--direction", "increasing")
        self.assertEqual([b["name"] for b in first["benchmarks"]],
                         ["sum/float32/64x40/axis1/packed/increasing/inclusive/torch"])
        both = self.run_peers("--shape", "64x40", "--shape", "30x20", "--dtype", "float32", "--op", "sum",
                              "--exclusive", "no", "--direction", "increasing", resume=True)
        self.assertEqual(schema_errors(both), [])
        names = [b["name"] for b in both["benchmarks"]]
        self.assertEqual(names, ["sum/float32/64x40/axis1/packed/increasing/inclusive/torch",
                                 "sum/float32/30x20/axis1/packed/increasing/inclusive/torch"])
        self.assertEqual(both["benchmarks"][0], first["benchmarks"][0])
        self.assertTrue(any("resumed" in note for note in both["context"]["notes"]))
        copies = {c["bytes"] for c in both["copies"]}
        self.assertTrue(all(b["copy"]["bytes"] in copies for b in both["benchmarks"]))

    def test_line_sampling_follows_the_driver(self):
        rng = np.random.default_rng(1)
        self.assertEqual(list(self.peers.choose_lines(10, 4, 40, rng)), list(range(10)))
        ids = self.peers.choose_lines(1 << 20, 1 << 8, 1 << 28, rng)
        self.assertEqual(len(ids), (1 << 20) // (1 << 8))
        self.assertEqual((ids[0], ids[-1]), (0, (1 << 20) - 1))
        self.assertTrue(np.all(np.diff(ids) > 0))
        self.assertEqual(list(self.peers.choose_lines(1, 1 << 28, 1 << 28, rng)), [0])

    def test_inputs_make_every_scan_exact(self):
        rng = np.random.default_rng(2)
        case = {"sizes": [6, 1001], "axis": 1, "dtype": "float16", "op": "prod"}
        x = self.peers.make_input(case, rng).astype(np.float64)
        self.assertFalse((x == 0).any())
        products = np.abs(np.cumprod(x, axis=1))
        self.assertTrue(set(np.unique(products)) <= {0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0})
        sums = self.peers.make_input(dict(case, op="sum", dtype="uint8"), rng)
        self.assertEqual(set(np.unique(sums)), {1, 2, 254, 255})


if __name__ == "__main__":
    unittest.main()
