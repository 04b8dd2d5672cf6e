"""TVM MetaSchedule on one op, for bench/tune_vs_metaschedule.py: run with a Python that has
apache-tvm (see ../shared/TOOLCHAIN.md). Tunes the op with `tune_tir` for the given trials,
builds the best schedule, times it (median of --repeat runs after warm-up) and prints one JSON
line: {"op", "trials", "tune_s", "median_ms"}.

    python bench/metaschedule_peer.py --op gemm_1024|conv_64_56 --trials 64 --threads 1 --work DIR
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import tvm
from tvm import te
from tvm.s_tir import meta_schedule as ms


def gemm(m: int, n: int, k: int):
    a = te.placeholder((m, k), name="A")
    b = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c]), [(m, k), (k, n)], (m, n)


def conv3x3(c_in: int, size: int, c_out: int, stride: int):
    x = te.placeholder((1, c_in, size, size), name="X")
    w = te.placeholder((c_out, c_in, 3, 3), name="W")
    bias = te.placeholder((c_out,), name="bias")
    pad = te.compute((1, c_in, size + 2, size + 2),
                     lambda n, c, h, v: tvm.tirx.if_then_else(
                         tvm.tirx.all(h >= 1, h <= size, v >= 1, v <= size), x[n, c, h - 1, v - 1], 0.0),
                     name="pad")
    out_size = (size + 2 - 3) // stride + 1
    rc = te.reduce_axis((0, c_in), name="rc")
    rh = te.reduce_axis((0, 3), name="rh")
    rw = te.reduce_axis((0, 3), name="rw")
    conv = te.compute((1, c_out, out_size, out_size),
                      lambda n, k, h, v: te.sum(pad[n, rc, h * stride + rh, v * stride + rw] * w[k, rc, rh, rw],
                                                axis=[rc, rh, rw]), name="conv")
    out = te.compute(conv.shape, lambda n, k, h, v: conv[n, k, h, v] + bias[k], name="out")
    return te.create_prim_func([x, w, bias, out]), [(1, c_in, size, size), (c_out, c_in, 3, 3), (c_out,)], \
        (1, c_out, out_size, out_size)


OPS = {"gemm_1024": lambda: gemm(1024, 1024, 1024), "conv_64_56": lambda: conv3x3(64, 56, 64, 1),
       "conv_256_14": lambda: conv3x3(256, 14, 256, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", required=True, choices=sorted(OPS))
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mcpu", default="native")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    func, in_shapes, out_shape = OPS[args.op]()
    mcpu = args.mcpu
    if mcpu == "native":  # the host's CPU as TVM's LLVM detects it; a fixed name would be another machine's
        mcpu = tvm.target.codegen.llvm_get_system_cpu()
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": args.threads})
    work = os.path.join(args.work, f"{args.op}.{args.trials}")
    start = time.time()
    database = ms.tune_tir(func, target, work, max_trials_global=args.trials,
                           num_trials_per_iter=min(64, args.trials), num_tuning_cores=args.threads)
    tune_s = time.time() - start
    sch = ms.tir_integration.compile_tir(database, func, target)
    lib = tvm.compile(sch.mod, target=target)
    lib = lib.mod if hasattr(lib, "mod") else lib  # an Executable wraps the runtime module
    dev = tvm.cpu()
    rng = np.random.default_rng(0)
    arrays = [tvm.runtime.tensor(rng.random(s, dtype=np.float32), dev) for s in in_shapes]
    arrays.append(tvm.runtime.tensor(np.zeros(out_shape, dtype=np.float32), dev))
    timer = lib.time_evaluator(lib.entry_name, dev, number=1, repeat=args.repeat, min_repeat_ms=0)
    results = timer(*arrays).results
    print(json.dumps({"op": args.op, "trials": args.trials, "tune_s": tune_s,
                      "median_ms": float(np.median(results)) * 1e3, "mcpu": mcpu}))


if __name__ == "__main__":
    main()
