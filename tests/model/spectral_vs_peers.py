#!/usr/bin/env python3
# DFT against numpy.fft and STFT and MelWeightMatrix against ONNX Runtime, beyond ONNX's cases:
# real and complex signals, zero padding and truncation to dft_length, onesided, inverse, the
# inverse of a onesided spectrum for even and odd lengths, an STFT with a Hann window and one
# without, a mel matrix for 16 kHz speech. Each runs on `tessel run --reference` and `--target
# llvm`; every output must satisfy max|ours - peer| / max|peer| <= 1e-4.
# Usage: spectral_vs_peers.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-4


def as_complex(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]


def pairs(z):
    return np.stack([z.real, z.imag], axis=-1)


# name, input shape, axis, dft_length, inverse, onesided, numpy oracle of the complex input
DFTS = [
    ("rfft_64", [2, 64, 1], 1, None, 0, 1, lambda z: pairs(np.fft.rfft(z, axis=1))),
    ("fft_complex_padded", [3, 20, 2], 1, 32, 0, 0, lambda z: pairs(np.fft.fft(z, 32, axis=1))),
    ("fft_truncated_axis2", [2, 3, 20, 1], 2, 12, 0, 0, lambda z: pairs(np.fft.fft(z, 12, axis=2))),
    ("ifft_complex", [2, 16, 2], 1, None, 1, 0, lambda z: pairs(np.fft.ifft(z, axis=1))),
    ("irfft_even", [2, 9, 2], 1, None, 1, 1, lambda z: np.fft.irfft(z, 16, axis=1)[..., None]),
    ("irfft_odd", [2, 8, 2], 1, 15, 1, 1, lambda z: np.fft.irfft(z, 15, axis=1)[..., None]),
]


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    checks = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape, axis, length, inverse, onesided, oracle in DFTS:
            inputs = ["x", "n" if length else "", "axis"]
            inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
            if length:
                inits.append(numpy_helper.from_array(np.array(length, np.int64), "n"))
            node = helper.make_node("DFT", inputs, ["y"], inverse=inverse, onesided=onesided)
            graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
            x = rng.standard_normal(shape).astype(np.float32)
            want = oracle(as_complex(x.astype(np.float64)))
            _, got = run_tessel(tessel, model, {"x": x}, tmp, name)
            checks.append((name, want, got))

        for name, window in (("stft_hann", True), ("stft_no_window", False)):
            inits = [numpy_helper.from_array(np.array(6, np.int64), "step")]
            inputs = ["x", "step", ""]
            if window:
                inits.append(numpy_helper.from_array(np.hanning(16).astype(np.float32), "w"))
                inputs[2] = "w"
            else:
                inits.append(numpy_helper.from_array(np.array(16, np.int64), "frame"))
                inputs.append("frame")
            node = helper.make_node("STFT", inputs, ["y"])
            graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 100, 1])],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
            feeds = {"x": rng.standard_normal([2, 100, 1]).astype(np.float32)}
            path, got = run_tessel(tessel, model, feeds, tmp, name)
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
            checks.append((name, want, got))

        values = [(np.int64, 40), (np.int64, 512), (np.int64, 16000), (np.float32, 20.0), (np.float32, 7600.0)]
        inits = [numpy_helper.from_array(np.array(v, t), f"c{i}") for i, (t, v) in enumerate(values)]
        node = helper.make_node("MelWeightMatrix", [t.name for t in inits], ["y"])
        graph = helper.make_graph([node], "mel", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        path, got = run_tessel(tessel, model, {}, tmp, "mel")
        checks.append(("mel_40_bins", ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {})[0],
                       got))

    failures = 0
    for name, want, got in checks:
        for mode, out in got.items():
            failures += not check(f"{name} {mode}", out, [want], TOLERANCE)
    print(f"{len(checks) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
