"""Two compiled libraries of one model, their kernels timed in alternation in one process: each
iteration runs A then B (B then A the next), each kernel's wall time taken from
tessel_context_run_profiled. On a shared machine whose speed drifts from one second to the next,
two runs a millisecond apart see the same machine; runs of `tessel run` minutes apart do not.
Prints the end-to-end and per-kernel minima and medians, B/A, and the kernels that differ.

    ~/.cache/tessel/venv/bin/python bench/kernel_ab.py OLD.so NEW.so [--iterations 200] [--threads 1]
        [--all]

Both libraries must come from the same model (as many kernels, in the same order: a tuned library
whose convs changed layout may name some of them after other nodes); a different count is refused.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import numpy as np  # noqa: E402

from tessel.model import Model  # noqa: E402


def random_feeds(model: Model, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in model.inputs:
        dtype = np.dtype(info.dtype)
        if dtype.kind == "f":
            feeds[info.name] = rng.uniform(-1, 1, info.shape).astype(dtype)
        else:
            feeds[info.name] = rng.integers(0, 4, info.shape).astype(dtype)
    return feeds


def alternate(models: list, feeds: dict, iterations: int) -> list:
    """Per model: a list of runs, each (end-to-end seconds, [kernel seconds])."""
    runs = [[] for _ in models]
    for m in models:  # warm-up
        for _ in range(3):
            m.run_profiled(feeds)
    for i in range(iterations):
        order = range(len(models)) if i % 2 == 0 else reversed(range(len(models)))
        for k in order:
            start = time.perf_counter()
            seconds = models[k].run_profiled(feeds)[1]
            runs[k].append((time.perf_counter() - start, seconds))
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--all", action="store_true", help="print every kernel, not only those that differ by 3%%")
    args = ap.parse_args()
    models = [Model(args.a), Model(args.b)]
    names = [[k.name for k in m.kernels] for m in models]
    if len(names[0]) != len(names[1]):
        print(f"the two libraries have {len(names[0])} and {len(names[1])} kernels: not the same model and "
              "fusion", file=sys.stderr)
        return 2
    renamed = sum(a != b for a, b in zip(*names))
    if renamed:  # a conv in another layout joins other nodes' group (its weight's unpacking): named after them
        print(f"note: {renamed} kernels are named differently in B; kernels are compared by position")
    for m in models:
        m.set_num_threads(args.threads)
    runs = alternate(models, random_feeds(models[0]), args.iterations)
    ms = lambda xs, f: 1e3 * f(xs)  # noqa: E731
    ends = [[r[0] for r in model_runs] for model_runs in runs]
    print(f"end to end  A min {ms(ends[0], min):.3f} median {ms(ends[0], statistics.median):.3f} ms | "
          f"B min {ms(ends[1], min):.3f} median {ms(ends[1], statistics.median):.3f} ms | "
          f"B/A min {min(ends[1]) / min(ends[0]):.3f} median {statistics.median(ends[1]) / statistics.median(ends[0]):.3f}")
    print(f"{'kernel':52s} {'A min':>8s} {'B min':>8s} {'B/A':>6s} {'A med':>8s} {'B med':>8s} {'B/A':>6s}")
    for k, name in enumerate(names[0]):
        a = [r[1][k] for r in runs[0]]
        b = [r[1][k] for r in runs[1]]
        ratio_min, ratio_med = min(b) / max(min(a), 1e-12), statistics.median(b) / max(statistics.median(a), 1e-12)
        if args.all or abs(ratio_min - 1) > 0.03 and abs(ratio_med - 1) > 0.03:
            print(f"k{k:<3d}{name[-48:]:48s} {ms(a, min):8.4f} {ms(b, min):8.4f} {ratio_min:5.2f}x "
                  f"{ms(a, statistics.median):8.4f} {ms(b, statistics.median):8.4f} {ratio_med:5.2f}x")
    print(f"A: {args.a}\nB: {args.b}\n{args.iterations} alternating iterations, {args.threads} thread(s)")
    print("command: bench/kernel_ab.py " + " ".join(sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
