"""Tests of the tessel package on models compiled by `tessel compile` (not the test double): the
shapes and output lists real ONNX graphs have that the fixture does not, 0-d tensors and an
output listed twice; a model built for the CUDA emulator run on device memory.

The tessel binary: argv[1], else TESSEL_BINARY from CTest. The models are built with onnx.helper."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import tessel

TESSEL = os.environ.get("TESSEL_BINARY", "")


def compile_model(tmp, name, nodes, inputs, outputs, target="llvm"):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx_path, so_path = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".so")
    onnx.save(model, onnx_path)
    subprocess.run([TESSEL, "compile", onnx_path, "--target", target, "-o", so_path], check=True, capture_output=True)
    return so_path


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


class CompiledModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        tmp = cls._tmp.name
        # z = x + y on scalars; w = x * v broadcast to [3].
        cls.scalar = compile_model(tmp, "scalar", [helper.make_node("Add", ["x", "y"], ["z"]),
                                                   helper.make_node("Mul", ["x", "v"], ["w"])],
                                   [f32("x", []), f32("y", []), f32("v", [3])], [f32("z", []), f32("w", [3])])
        # y = Relu(x), n = Neg(x); y is listed twice, around n.
        twice = ([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["n"])],
                 [f32("x", [2, 3])], [f32("y", [2, 3]), f32("n", [2, 3]), f32("y", [2, 3])])
        cls.twice = compile_model(tmp, "twice", *twice)
        cls.twice_gpu = compile_model(tmp, "twice_gpu", *twice, target="cuda-emulated")
        # NonZero of x > 0: [2, k] coordinates, k decided by each run (at most 6).
        cls.nonzero = compile_model(tmp, "nonzero", [helper.make_node("Greater", ["x", "zero"], ["hot"]),
                                                     helper.make_node("NonZero", ["hot"], ["where"])],
                                    [f32("x", [2, 3]), f32("zero", [])],
                                    [helper.make_tensor_value_info("where", TensorProto.INT64, None)])
        # A matmul whose tiles the GPU code fetches 16 bytes at a time.
        cls.matmul_gpu = compile_model(tmp, "matmul_gpu", [helper.make_node("MatMul", ["a", "b"], ["c"])],
                                       [f32("a", [64, 64]), f32("b", [64, 64])], [f32("c", [64, 64])],
                                       target="cuda-emulated")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_scalar_inputs_and_outputs_stay_0d(self):
        with tessel.load(self.scalar) as m:
            self.assertEqual([i.shape for i in m.inputs], [(), (), (3,)])
            self.assertEqual([o.shape for o in m.outputs], [(), (3,)])
            v = np.array([1, 2, 3], np.float32)
            out = m.run({"x": np.array(2, np.float32), "y": np.array(0.5, np.float32), "v": v})
            self.assertEqual(out["z"].shape, ())
            self.assertEqual(out["z"], 2.5)
            np.testing.assert_array_equal(out["w"], 2 * v)
            # A numpy scalar is a 0-d array too (np.ascontiguousarray made it [1] before).
            out = m.run({"x": np.float32(3), "y": np.float32(4), "v": v})
            self.assertEqual(out["z"].shape, ())
            self.assertEqual(out["z"], 7)

    def test_scalar_input_keeps_its_shape_check(self):
        with tessel.load(self.scalar) as m:
            with self.assertRaisesRegex(tessel.TesselError, r"input 'x': expected shape \[\], got \[1\]"):
                m.run({"x": np.ones(1, np.float32), "y": np.float32(4), "v": np.ones(3, np.float32)})

    def test_output_listed_twice(self):
        # The outputs array was one tensor short of the count given to C, which read past it.
        x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
        with tessel.load(self.twice) as m:
            self.assertEqual([o.name for o in m.outputs], ["y", "n", "y"])
            for _ in range(3):
                out = m.run({"x": x})
                self.assertEqual(list(out), ["y", "n"])
                np.testing.assert_array_equal(out["y"], np.maximum(x, 0))
                np.testing.assert_array_equal(out["n"], -x)
            times = m.profile({"x": x}, repeat=2)
            self.assertEqual(len(times), len(m.kernels))

    def test_an_output_of_data_dependent_extent_has_each_runs_shape(self):
        with tessel.load(self.nonzero) as m:
            self.assertEqual(m.outputs[0].shape, (2, 6))  # the bound
            zero = np.float32(0)
            x = np.array([[1, -1, 2], [0, 3, -2]], np.float32)
            np.testing.assert_array_equal(m.run({"x": x, "zero": zero})["where"], np.array(np.nonzero(x > 0)))
            self.assertEqual(m.run({"x": -np.abs(x), "zero": zero})["where"].shape, (2, 0))
            self.assertEqual(m.run({"x": np.ones((2, 3), np.float32), "zero": zero})["where"].shape, (2, 6))

    def test_device_memory(self):
        # Built for the CUDA emulator, whose device memory is host memory: the arrays' addresses
        # serve as device pointers. The third output is the first again: copied, not computed.
        x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
        outs = [np.full((2, 3), np.nan, np.float32) for _ in range(3)]
        with tessel.load(self.twice_gpu) as m:
            self.assertEqual(m.device, "cuda: the CUDA emulator on this CPU")
            m.run_device([x.ctypes.data], [o.ctypes.data for o in outs])
            np.testing.assert_array_equal(outs[0], np.maximum(x, 0))
            np.testing.assert_array_equal(outs[1], -x)
            np.testing.assert_array_equal(outs[2], outs[0])
            with self.assertRaisesRegex(tessel.TesselError, "expected 3 outputs as int device pointers"):
                m.run_device([x.ctypes.data], outs[:2])
        # Buffers 4 bytes past an aligned address: staged, since the kernels read 16 bytes at once.
        rng = np.random.default_rng(5)
        a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
        store = [np.zeros(64 * 64 + 4, np.float32) for _ in range(3)]
        views = [s[1:1 + 64 * 64].reshape(64, 64) for s in store]
        views[0][...], views[1][...] = a, b
        with tessel.load(self.matmul_gpu) as m:
            m.run_device([views[0].ctypes.data, views[1].ctypes.data], [views[2].ctypes.data])
            np.testing.assert_allclose(views[2], a @ b, rtol=1e-4, atol=1e-4)
            self.assertTrue(all(v.ctypes.data % 16 == 4 for v in views))
        with tessel.load(self.twice) as m:
            with self.assertRaisesRegex(tessel.TesselError, "this model runs on the CPU"):
                m.run_device([x.ctypes.data], [o.ctypes.data for o in outs])


if __name__ == "__main__":
    if len(sys.argv) >= 2:
        TESSEL = sys.argv[1]
        del sys.argv[1]
    unittest.main()
