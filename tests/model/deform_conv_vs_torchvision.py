#!/usr/bin/env python3
# DeformConv against torchvision.ops.deform_conv2d (ONNX Runtime has no kernel for it): strides,
# pads, dilations, groups, offset groups, masks and biases, with offsets large enough to move
# taps outside the input. Each runs on `tessel run --reference` and `--target llvm`; every output
# must satisfy max|ours - torchvision| / max|torchvision| <= 1e-4.
# Usage: deform_conv_vs_torchvision.py TESSEL_BIN
import os
import sys
import tempfile

import numpy as np
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_check import check, run_tessel  # noqa: E402

TOLERANCE = 1e-4
# name, C, M, kernel, stride, pad, dilation, group, offset_group, mask, bias
CASES = [
    ("plain_3x3", 4, 6, 3, 1, 1, 1, 1, 1, False, False),
    ("stride2_dilation2_bias", 4, 6, 3, 2, 2, 2, 1, 1, False, True),
    ("groups_offset_groups_mask", 4, 6, 3, 1, 1, 1, 2, 2, True, True),
    ("kernel_2x2_offset_groups4_mask", 8, 4, 2, 1, 0, 1, 1, 4, True, False),
]
H, W = 9, 11


def main():
    tessel = sys.argv[1]
    rng = np.random.default_rng(20261206)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, c, m, k, stride, pad, dilation, group, offset_group, with_mask, with_bias in CASES:
            oh = (H + 2 * pad - dilation * (k - 1) - 1) // stride + 1
            ow = (W + 2 * pad - dilation * (k - 1) - 1) // stride + 1
            x = rng.standard_normal([2, c, H, W]).astype(np.float32)
            w = rng.standard_normal([m, c // group, k, k]).astype(np.float32)
            offset = (rng.standard_normal([2, offset_group * 2 * k * k, oh, ow]) * 2).astype(np.float32)
            mask = rng.uniform(0, 1, [2, offset_group * k * k, oh, ow]).astype(np.float32)
            bias = rng.standard_normal([m]).astype(np.float32)
            feeds = {"x": x, "offset": offset}
            inits = [numpy_helper.from_array(w, "w")]
            inputs = ["x", "w", "offset", "", ""]
            if with_bias:
                inits.append(numpy_helper.from_array(bias, "b"))
                inputs[3] = "b"
            if with_mask:
                feeds["mask"] = mask
                inputs[4] = "mask"
            node = helper.make_node("DeformConv", inputs, ["y"], kernel_shape=[k, k], strides=[stride, stride],
                                    pads=[pad] * 4, dilations=[dilation, dilation], group=group,
                                    offset_group=offset_group)
            graph = helper.make_graph([node], name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
                                                     for n, v in feeds.items()],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
            want = torchvision.ops.deform_conv2d(
                torch.tensor(x), torch.tensor(offset), torch.tensor(w),
                torch.tensor(bias) if with_bias else None, stride=stride, padding=pad, dilation=dilation,
                mask=torch.tensor(mask) if with_mask else None).numpy()
            _, results = run_tessel(tessel, model, feeds, tmp, name)
            for mode, got in results.items():
                failures += not check(f"{name} {mode}", got, [want], TOLERANCE)
    print(f"{len(CASES) * 2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
