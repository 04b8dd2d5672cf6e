#!/usr/bin/env python3
"""Tessel on a GPU against its peers, one run, printed as ratios.

For each model of --models (and of --micro): random inputs (seeded) run
through ONNX Runtime (its CUDA provider where it has one, else its CPU
provider, named in the line) and through `tessel run --target T`; the
outputs must agree (max |tessel - ort| / max |ort| under --tolerance) and the
median end-to-end latencies (host arrays in and out, as both APIs take them)
are compared. For the micro models, Tessel's time in kernels (between CUDA
events) is also compared with PyTorch on the same GPU: GEMM with
torch.matmul (cuBLAS), LayerNorm, softmax and bias + GELU with
torch.compile. Ratios are Tessel / peer: below 1 Tessel is faster.
With --tuning-log, Tessel compiles with the schedules a tuning session found
(`tessel run --tuning-log`); --only limits the run to the named models.

    compare_on_gpu.py --tessel build-gpu/bundle/tessel [--models DIR] [--micro DIR] [--target cuda] [--repeat N]
                      [--tuning-log FILE] [--only gemm,conv3x3]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort


def ort_session(path):
    providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in ort.get_available_providers()]
    session = ort.InferenceSession(path, providers=providers)
    return session, session.get_providers()[0].replace("ExecutionProvider", "")


def random_inputs(session, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def median_ms(fn, repeat, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def run_tessel(args, model, feeds, names):
    with tempfile.TemporaryDirectory() as tmp:
        inputs, outputs = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(inputs)
        for name, value in feeds.items():
            np.save(os.path.join(inputs, name + ".npy"), value)
        command = [args.tessel, "run", model, "--target", args.target, "--inputs", inputs, "--out", outputs,
                   "--repeat", str(args.repeat), "--profile"]
        if args.tuning_log:
            command += ["--tuning-log", args.tuning_log]
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        if done.returncode != 0:
            return None, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        latency = re.search(r"latency: median ([0-9.]+) ms", done.stdout)
        kernels = re.search(r"end to end: .*?, ([0-9.]+) ms in kernels\)", done.stdout)
        got = [np.load(os.path.join(outputs, n + ".npy")) for n in names]
        return {"ms": float(latency.group(1)), "kernel_ms": float(kernels.group(1)), "outputs": got}, ""


def torch_peer(name, feeds, repeat):
    """The PyTorch time in ms of the micro model `name` on the GPU, and what it is; None without CUDA."""
    try:
        import torch
    except ImportError:
        return None, "no PyTorch"
    if not torch.cuda.is_available():
        return None, "PyTorch sees no GPU"
    x = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
    if name == "gemm":
        fn, what = (lambda: torch.matmul(x["A"], x["B"])), "torch.matmul (cuBLAS)"
    elif name in ("layernorm", "softmax", "bias_gelu"):
        cols = next(iter(x.values())).shape[-1]
        gamma, beta = torch.randn(cols, device="cuda"), torch.randn(cols, device="cuda")
        bias = torch.randn(cols, device="cuda")
        body = {"layernorm": lambda t: torch.nn.functional.layer_norm(t, (cols,), gamma, beta, 1e-5),
                "softmax": lambda t: torch.softmax(t, -1),
                "bias_gelu": lambda t: torch.nn.functional.gelu(t + bias)}[name]
        compiled = torch.compile(body)
        fn, what = (lambda: compiled(x["x"])), "torch.compile"
    else:
        return None, "no PyTorch peer"
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times)), what


def compare(args, path, micro):
    name = os.path.splitext(os.path.basename(path))[0]
    session, provider = ort_session(path)
    feeds = random_inputs(session, seed=1)
    names = [o.name for o in session.get_outputs()]
    want = session.run(None, feeds)
    ort_ms = median_ms(lambda: session.run(None, feeds), args.repeat)
    got, why = run_tessel(args, path, feeds, names)
    if got is None:
        print(f"{name:28s} tessel FAILED: {why}", flush=True)
        return False
    scale = max(float(np.max(np.abs(w))) for w in want) or 1.0
    error = max(float(np.max(np.abs(g.astype(np.float64) - w))) for g, w in zip(got["outputs"], want)) / scale
    agree = error <= args.tolerance
    line = (f"{name:28s} ORT {provider} {ort_ms:9.3f} ms  tessel {got['ms']:9.3f} ms  ratio {got['ms'] / ort_ms:6.2f}"
            f"  (kernels {got['kernel_ms']:.3f} ms)  error {error:.1e} {'ok' if agree else 'MISMATCH'}")
    if micro:
        peer_ms, what = torch_peer(name, feeds, args.repeat)
        line += (f"  | vs {what}: {peer_ms:.3f} ms, kernels ratio {got['kernel_ms'] / peer_ms:.2f}" if peer_ms
                 else f"  | {what}")
    print(line, flush=True)
    return agree


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessel", required=True)
    parser.add_argument("--models")
    parser.add_argument("--micro")
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--tuning-log")
    parser.add_argument("--only", help="comma-separated model names (file names without .onnx)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    tuned = f" tuned by {args.tuning_log}" if args.tuning_log else ""
    print(f"== tessel --target {args.target}{tuned} vs ONNX Runtime {ort.__version__} "
          f"(providers {', '.join(ort.get_available_providers())}); ratio = tessel / peer", flush=True)
    ok = True
    for folder, micro in ((args.models, False), (args.micro, True)):
        if folder:
            for f in sorted(os.listdir(folder)):
                if f.endswith(".onnx") and (only is None or f[:-len(".onnx")] in only):
                    ok = compare(args, os.path.join(folder, f), micro) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
