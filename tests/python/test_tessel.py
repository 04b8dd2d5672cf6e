"""Tests of the tessel package against the fixture model (tests/python/fixture_model.c).

Paths: argv[1] (fixture model) and argv[2] (not a model), else TESSEL_FIXTURE_MODEL and
TESSEL_NOT_A_MODEL from CTest."""
import os
import sys
import tempfile
import threading
import unittest

import numpy as np

import tessel

FIXTURE = os.environ.get("TESSEL_FIXTURE_MODEL", "")
NOT_A_MODEL = os.environ.get("TESSEL_NOT_A_MODEL", "")


def feeds(a=None, b=None):
    return {"a": np.arange(6, dtype=np.float32).reshape(2, 3) if a is None else a,
            "b": np.full((2, 3), 10, np.float32) if b is None else b}


class TesselTest(unittest.TestCase):
    def setUp(self):
        self.model = tessel.load(FIXTURE)

    def tearDown(self):
        self.model.close()

    def test_run(self):
        out = self.model.run(feeds())
        self.assertEqual(list(out), ["sum", "count"])
        np.testing.assert_array_equal(out["sum"], np.arange(6, dtype=np.float32).reshape(2, 3) + 10)
        self.assertEqual(out["count"].dtype, np.int64)
        self.assertEqual(self.model.run(feeds())["count"][0], 2)

    def test_info(self):
        self.assertEqual([(i.name, i.dtype, i.shape) for i in self.model.inputs],
                         [("a", np.float32, (2, 3)), ("b", np.float32, (2, 3))])
        self.assertEqual([(o.name, o.dtype, o.shape) for o in self.model.outputs],
                         [("sum", np.float32, (2, 3)), ("count", np.int64, (1,))])
        self.assertEqual([k.name for k in self.model.kernels], ["add", "count"])
        self.assertEqual(self.model.kernels[0].flops, 6)
        self.assertEqual(self.model.arena_bytes, 24)
        self.assertEqual(self.model.device, "cpu")
        self.assertEqual(self.model.version, "0.1.0")

    def test_profile(self):
        times = self.model.profile(feeds(), repeat=5)
        self.assertEqual([t.name for t in times], ["add", "count"])
        self.assertTrue(all(t.seconds >= 0 for t in times))
        self.assertEqual(self.model.run(feeds())["count"][0], 6)
        with self.assertRaisesRegex(tessel.TesselError, "repeat"):
            self.model.profile(feeds(), repeat=0)
        out, seconds = self.model.run_profiled(feeds())
        self.assertEqual(len(seconds), 2)
        self.assertTrue(all(s >= 0 for s in seconds))
        np.testing.assert_array_equal(out["sum"], self.model.run(feeds())["sum"])

    def test_non_contiguous_input(self):
        a = np.arange(6, dtype=np.float32).reshape(3, 2).T
        self.assertFalse(a.flags.c_contiguous)
        np.testing.assert_array_equal(self.model.run(feeds(a=a))["sum"], a + 10)

    def test_feed_errors(self):
        with self.assertRaisesRegex(tessel.TesselError, r"missing input 'b'.*\['a', 'b'\]"):
            self.model.run({"a": feeds()["a"]})
        with self.assertRaisesRegex(tessel.TesselError, "unknown input 'c'"):
            self.model.run({**feeds(), "c": np.zeros(1)})
        with self.assertRaisesRegex(tessel.TesselError, "expected dtype float32.*got float64"):
            self.model.run(feeds(a=np.zeros((2, 3))))
        with self.assertRaises(tessel.TesselError) as e:
            self.model.run(feeds(a=np.zeros((3, 2), np.float32)))
        self.assertEqual(e.exception.status, tessel.Status.SHAPE_MISMATCH)
        self.assertIn("input 'a': expected shape [2,3], got [3,2]", str(e.exception))

    def test_threads(self):
        self.model.set_num_threads(3)
        self.assertEqual(self.model.get_num_threads(), 3)
        with self.assertRaisesRegex(tessel.TesselError, "INVALID_ARGUMENT"):
            self.model.set_num_threads(0)

    def test_concurrent_contexts(self):
        counts, errors = {}, []

        def work(k):
            try:
                counts[k] = [int(self.model.run(feeds())["count"][0]) for _ in range(100)]
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(counts, {0: list(range(1, 101)), 1: list(range(1, 101))})

    def test_close(self):
        with tessel.load(FIXTURE) as m:
            m.run(feeds())
        with self.assertRaisesRegex(tessel.TesselError, "closed"):
            m.run(feeds())
        m.close()


class LoadErrorTest(unittest.TestCase):
    def test_not_a_model(self):
        with self.assertRaisesRegex(tessel.TesselError, "is not a Tessel model library"):
            tessel.load(NOT_A_MODEL)

    def test_missing_file(self):
        with self.assertRaisesRegex(tessel.TesselError, "no such file"):
            tessel.load("/nonexistent/model.so")

    def test_text_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".so") as f:
            f.write("not a library\n")
            f.flush()
            with self.assertRaisesRegex(tessel.TesselError, "is not a Tessel model library"):
                tessel.load(f.name)

    def test_load_failure(self):
        os.environ["TESSEL_FIXTURE_FAIL_LOAD"] = "1"
        try:
            with self.assertRaisesRegex(tessel.TesselError, "tessel_model_load failed: .*checksum"):
                tessel.load(FIXTURE)
        finally:
            del os.environ["TESSEL_FIXTURE_FAIL_LOAD"]


if __name__ == "__main__":
    if len(sys.argv) >= 3:
        FIXTURE, NOT_A_MODEL = sys.argv[1], sys.argv[2]
        del sys.argv[1:3]
    unittest.main()
