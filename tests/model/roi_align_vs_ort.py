#!/usr/bin/env python3
# RoiAlign against ONNX Runtime: two images, boxes inside, crossing the border, outside and
# smaller than a pixel, a spatial scale of 0.5, both coordinate transformations, average and
# max, sampling ratios 1 and 3, batch indices given at run time. Each runs on `tessel run
# --reference` and `--target llvm`; every output must satisfy max|ours - ORT| / max|ORT| <= 1e-4.
# Usage: roi_align_vs_ort.py TESSEL_BIN
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

TOLERANCE = 1e-4
CASES = [(mode, transform, ratio) for mode in ("avg", "max") for transform in ("half_pixel", "output_half_pixel")
         for ratio in (1, 3)]
ROIS = np.array([[2, 3, 15, 12], [-4, -2, 6, 5], [10, 14, 30, 26], [40, 40, 50, 50], [5.2, 5.3, 5.6, 5.5]],
                np.float32)


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (mode, transform, ratio) in enumerate(CASES):
            node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode,
                                    coordinate_transformation_mode=transform, sampling_ratio=ratio,
                                    output_height=3, output_width=4, spatial_scale=0.5)
            graph = helper.make_graph([node], f"roi{n}",
                                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 14, 16]),
                                       helper.make_tensor_value_info("rois", TensorProto.FLOAT, [5, 4]),
                                       helper.make_tensor_value_info("batch", TensorProto.INT64, [5])],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            path = os.path.join(tmp, f"roi{n}.onnx")
            onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8), path)
            feeds = {"x": rng.standard_normal([2, 3, 14, 16]).astype(np.float32), "rois": ROIS,
                     "batch": np.array([0, 1, 1, 0, 1], np.int64)}
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
            in_dir, out_dir = os.path.join(tmp, f"in{n}"), os.path.join(tmp, f"out{n}")
            os.makedirs(in_dir)
            os.makedirs(out_dir)
            for key, value in feeds.items():
                np.save(os.path.join(in_dir, key + ".npy"), value)
            name = f"{mode} {transform} ratio {ratio}"
            for flags in (["--reference"], ["--target", "llvm"]):
                run = subprocess.run([tessel, "run", path, *flags, "--inputs", in_dir, "--out", out_dir],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    print(f"FAIL {name} {flags[-1]}: exit {run.returncode}\n{run.stdout}{run.stderr}")
                    failures += 1
                    continue
                got = np.load(os.path.join(out_dir, "y.npy"))
                ratio_err = float(np.abs(got - want).max() / max(1e-6, float(np.abs(want).max())))
                ok = got.shape == want.shape and ratio_err <= TOLERANCE
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} {name:34s} {flags[-1]:12s} ratio {ratio_err:.2e}")
    print(f"{len(CASES) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
