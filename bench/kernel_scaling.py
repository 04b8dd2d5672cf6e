"""Which kernels of a model lose at several threads: each model is compiled once, its kernels timed
by `tessel run --profile` at one thread and at N threads, alternately, and the kernels are listed
by the time they lose against a perfect N-fold speed-up (median over the rounds). A diagnostic for
the two-thread gap, not a benchmark against a peer (bench/ab_compare.py compares with ONNX Runtime
at any thread count).

    ~/.cache/tessel/venv/bin/python bench/kernel_scaling.py [--models mnasnet1_0,squeezenet1_1] \\
        [--tessel build/src/cli/tessel] [--threads 2] [--rounds 3] [--repeat 200] [--top 12]

A kernel that scales alone (compile it as its own model) but not in the model reads what the
kernel before it wrote on the other core: their parallel loops split different axes.
Models are read from ${TESSEL_CACHE:-~/.cache/tessel}/models (scripts/export_models.py).
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, exported_models, table  # noqa: E402


def kernel_times(tessel: str, library: str, threads: int, repeat: int) -> list[tuple[str, float]]:
    """(kernel, median ms) in the order `tessel run --profile` lists them."""
    out = subprocess.run([tessel, "run", library, "--threads", str(threads), "--repeat", str(repeat), "--profile"],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        cells = line.split()
        if len(cells) > 3 and cells[1].endswith("%"):
            rows.append((cells[0], float(cells[2])))
    if not rows:
        raise RuntimeError(f"no kernel table in the output of {tessel} run {library} --profile:\n{out}")
    return rows


def scaling_rows(one: dict, many: dict, threads: int, top: int) -> list[list[str]]:
    rows = []
    for key in one:
        a, b = statistics.median(one[key]), statistics.median(many[key])
        rows.append((b - a / threads, key, a, b))
    rows.sort(reverse=True)
    return [[key[1][:48], f"{a:.4f}", f"{b:.4f}", f"{a / b:.2f}x", f"{lost:.4f}"] for lost, key, a, b in rows[:top]]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="mnasnet1_0,squeezenet1_1,mobilenet_v2")
    p.add_argument("--tessel", default=os.path.join(REPO, "build", "src", "cli", "tessel"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=200)
    p.add_argument("--top", type=int, default=12)
    args = p.parse_args()
    names = [m for m in args.models.split(",") if m]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.time()
        for index, name, path in exported_models(names):
            library = os.path.join(tmp, name + ".so")
            subprocess.run([args.tessel, "compile", path, "-o", library], check=True, capture_output=True)
            one, many = collections.defaultdict(list), collections.defaultdict(list)
            for r in range(args.rounds):
                # Kernels are keyed by their place in the table: names are cut to its column.
                for i, (kernel, ms) in enumerate(kernel_times(args.tessel, library, 1, args.repeat)):
                    one[(i, kernel)].append(ms)
                for i, (kernel, ms) in enumerate(kernel_times(args.tessel, library, args.threads, args.repeat)):
                    many[(i, kernel)].append(ms)
                print(f"[{name}: round {r + 1}/{args.rounds}, model {index + 1}/{len(names)}] "
                      f"{time.time() - started:.0f} s elapsed", file=sys.stderr)
            total_one = sum(statistics.median(v) for v in one.values())
            total_many = sum(statistics.median(v) for v in many.values())
            print(f"{name}: kernels sum {total_one:.3f} ms at 1 thread, {total_many:.3f} ms at {args.threads} "
                  f"({total_one / total_many:.2f}x; {total_many - total_one / args.threads:.3f} ms over a perfect "
                  f"{args.threads}-fold speed-up)")
            print(table(["kernel", "1T ms", f"{args.threads}T ms", "speed-up", "ms lost"],
                        scaling_rows(one, many, args.threads, args.top)))
            print()
    print("command: bench/kernel_scaling.py " + " ".join(sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
