#!/usr/bin/env python3
"""A GPU model.so run on PyTorch's device buffers and stream (tessel_context_run_device)
against the same model on host arrays (tessel_context_run): the outputs must agree.

    device_buffers.py MODEL.so
"""
import sys

import numpy as np
import torch

import tessel


def main(path):
    with tessel.load(path) as model:
        print(f"{path}: {model.device}", flush=True)
        rng = np.random.default_rng(3)
        feeds = {i.name: rng.standard_normal(i.shape).astype(i.dtype) for i in model.inputs}
        want = model.run(feeds)
        inputs = [torch.from_numpy(feeds[i.name]).cuda() for i in model.inputs]
        outputs = [torch.empty(o.shape, dtype=torch.float32, device="cuda") for o in model.outputs]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())  # the inputs' copies first
        with torch.cuda.stream(stream):
            model.run_device([t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs], stream.cuda_stream)
        worst = 0.0
        for info, got in zip(model.outputs, outputs):
            expected = want[info.name]
            scale = max(float(np.max(np.abs(expected))), 1e-30)
            worst = max(worst, float(np.max(np.abs(got.cpu().numpy() - expected))) / scale)
        print(f"device buffers vs host arrays: max relative difference {worst:.1e}", flush=True)
        return 0 if worst <= 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
