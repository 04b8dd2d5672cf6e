"""The single-op section: GEMM 1024^3 and ResNet-18's 3x3 convolutions, each a one-node ONNX model
compiled by Tessel, timed in bench/op_peers.cpp against OpenBLAS and oneDNN in one process per
thread count."""
from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from typing import Dict, List, NamedTuple, Optional, Tuple

from common import REPO, Settings, TesselCompiler, Timing, fmt, ratio, table

SOURCE = os.path.join(REPO, "bench", "op_peers.cpp")


class OpSpec(NamedTuple):
    name: str
    kind: str                # "gemm" or "conv"
    dims: Tuple[int, ...]    # gemm: M, N, K; conv: C, H (=W), K, stride
    in_resnet18: int         # how often ResNet-18 runs this convolution (0 for the GEMM)

    @property
    def gflop(self) -> float:
        if self.kind == "gemm":
            m, n, k = self.dims
            return 2.0 * m * n * k / 1e9
        c, h, k, s = self.dims
        o = (h + 2 - 3) // s + 1
        return 2.0 * k * o * o * c * 9 / 1e9

    def describe(self) -> str:
        if self.kind == "gemm":
            return f"{self.name}: fp32 MatMul [{self.dims[0]}x{self.dims[2]}] x [{self.dims[2]}x{self.dims[1]}], " \
                   f"{self.gflop:.3f} GFLOP"
        c, h, k, s = self.dims
        return (f"{self.name}: Conv 3x3 pad 1 stride {s} + bias, batch 1, {c}->{k} channels, {h}x{h} input, "
                f"{self.gflop:.3f} GFLOP, {self.in_resnet18}x in ResNet-18")


# The distinct 3x3 convolutions of ResNet-18 at batch 1 (the 7x7 stem left out).
OPS = [
    OpSpec("gemm_1024", "gemm", (1024, 1024, 1024), 0),
    OpSpec("conv_64_56", "conv", (64, 56, 64, 1), 4),
    OpSpec("conv_128_28", "conv", (128, 28, 128, 1), 3),
    OpSpec("conv_256_14", "conv", (256, 14, 256, 1), 3),
    OpSpec("conv_512_7", "conv", (512, 7, 512, 1), 3),
    OpSpec("conv_64to128_56_s2", "conv", (64, 56, 128, 2), 1),
    OpSpec("conv_128to256_28_s2", "conv", (128, 28, 256, 2), 1),
    OpSpec("conv_256to512_14_s2", "conv", (256, 14, 512, 2), 1),
]
QUICK_OPS = ["gemm_1024", "conv_64_56", "conv_64to128_56_s2"]
# Implementations in table order; Tessel's ratio is taken against each of the others.
IMPLS = {"gemm": ["tessel", "openblas", "onednn_sgemm"], "conv": ["tessel", "onednn", "onednn_nchw"]}


def write_op_model(op: OpSpec, out_dir: str) -> Tuple[str, Optional[str]]:
    """The one-node ONNX model of op (opset 17) and, for a convolution, its weights as raw float32
    (W [K,C,3,3] then bias [K]) for op_peers.cpp. Seeded: the same files every run."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    os.makedirs(out_dir, exist_ok=True)
    if op.kind == "gemm":
        m, n, k = op.dims
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["A", "B"], ["C"])], op.name,
            [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k]),
             helper.make_tensor_value_info("B", TensorProto.FLOAT, [k, n])],
            [helper.make_tensor_value_info("C", TensorProto.FLOAT, [m, n])])
        weights_path = None
    else:
        c, h, k, s = op.dims
        o = (h + 2 - 3) // s + 1
        rng = np.random.default_rng(zlib.crc32(op.name.encode()))
        w = (rng.standard_normal((k, c, 3, 3)) * np.sqrt(2.0 / (c * 9))).astype(np.float32)
        b = (rng.standard_normal(k) * 0.1).astype(np.float32)
        weights_path = os.path.join(out_dir, op.name + ".weights.bin")
        np.concatenate([w.ravel(), b]).astype(np.float32).tofile(weights_path)
        node = helper.make_node("Conv", ["x", "W", "B"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                strides=[s, s])
        graph = helper.make_graph(
            [node], op.name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, k, o, o])],
            initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tessel-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, op.name + ".onnx")
    onnx.save(model, path)
    return path, weights_path


# Builds of op_peers.cpp, best first: a peer library whose headers or .so are missing drops out.
VARIANTS = [
    ("OpenBLAS+oneDNN", ["-DHAVE_OPENBLAS", "-DHAVE_DNNL"], ["-lopenblas", "-ldnnl"]),
    ("OpenBLAS only", ["-DHAVE_OPENBLAS"], ["-lopenblas"]),
    ("oneDNN only", ["-DHAVE_DNNL"], ["-ldnnl"]),
    ("no peer library", [], []),
]


def build_op_peers(work_dir: str) -> Tuple[Optional[str], List[str]]:
    """Compiles op_peers.cpp (cached in the work folder by the source's digest); returns the
    binary and notes saying which peers it has, or why one is missing."""
    with open(SOURCE, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()[:16]
    notes = []
    for label, defines, libs in VARIANTS:
        binary = os.path.join(work_dir, f"op_peers-{'-'.join(d[7:].lower() for d in defines) or 'none'}-{key}")
        if not os.path.exists(binary):
            cmd = ["c++", "-O2", "-std=c++17", *defines, SOURCE, "-o", binary + ".tmp", *libs, "-ldl", "-lpthread"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                # The first real error: a missing header ("fatal error") or library ("cannot find").
                lines = [l for l in proc.stderr.splitlines()
                         if ("error" in l or "cannot find" in l) and "collect2" not in l] or \
                    proc.stderr.splitlines() or ["?"]
                notes.append(f"op_peers build with {label} failed: {lines[0].strip()}")
                continue
            os.replace(binary + ".tmp", binary)
        notes.append(f"op_peers built with {label}: c++ -O2 -std=c++17 {' '.join(defines)} "
                     f"bench/op_peers.cpp {' '.join(libs)} -ldl -lpthread")
        return binary, notes
    return None, notes


class Measurement(NamedTuple):
    timing: Optional[Timing]
    reason: str  # why it is n/a


def _parse(stdout: str) -> Tuple[Dict[Tuple[str, str], Measurement], Dict[str, str], List[str]]:
    """op_peers' lines -> {(op, impl): Measurement}, {op: check text}, INFO lines."""
    results, checks, infos = {}, {}, []
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "INFO":
            infos.append(rest)
            continue
        if kind == "NA":
            head, _, reason = rest.partition(" reason=")
            f = dict(kv.split("=", 1) for kv in head.split())
            results[(f["op"], f["impl"])] = Measurement(None, reason)
            continue
        f = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
        if kind == "RESULT":
            results[(f["op"], f["impl"])] = Measurement(
                Timing(int(f["reps"]), float(f["median_ms"]), float(f["min_ms"])), "")
        elif kind == "CHECK":
            checks[f["op"]] = f"{float(f['max_rel_err']):.1e} vs {f['ref']}"
    return results, checks, infos


class OpRow(NamedTuple):
    op: OpSpec
    threads: int
    impl: str
    m: Measurement
    check: str


def bench_ops(names: List[str], work_dir: str, compiler: TesselCompiler, threads_list: List[int],
              settings: Settings, peer_env: dict, log) -> Tuple[List[OpRow], List[str]]:
    ops = [op for op in OPS if op.name in names]
    notes = [op.describe() for op in ops]
    binary, build_notes = build_op_peers(work_dir)
    notes += build_notes
    args = []
    for op in ops:
        onnx_path, weights = write_op_model(op, os.path.join(work_dir, "ops"))
        log(f"compiling {op.name} with tessel ...")
        compiled = compiler.compile(onnx_path, op.name)
        so = compiled.so_path or "-"
        if compiled.so_path is None:
            notes.append(f"{op.name}: tessel compile failed: {compiled.error}")
        if op.kind == "gemm":
            args += ["--op", ",".join(["gemm", op.name, *map(str, op.dims), so])]
        else:
            c, h, k, s = op.dims
            args += ["--op", ",".join(["conv", op.name, str(c), str(h), str(h), str(k), str(s), weights, so])]
    rows: List[OpRow] = []
    infos: List[str] = []
    for t in threads_list:
        results, checks = {}, {}
        if binary is not None:
            log(f"timing the ops at {t} thread(s) ...")
            # One process per thread count: oneDNN's OpenMP runtime reads OMP_NUM_THREADS once.
            env = dict(peer_env, OMP_NUM_THREADS=str(t), TESSEL_NUM_THREADS=str(t))
            cmd = [binary, "--threads", str(t), "--repeat", str(settings.repeat), "--warmup", str(settings.warmup),
                   "--budget", str(settings.budget_s), *args]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            results, checks, lines = _parse(proc.stdout)
            infos += [l for l in lines if l not in infos]
            if proc.returncode != 0:
                tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
                notes.append(f"op_peers at {t} thread(s) exited with code {proc.returncode}: {tail}")
        for op in ops:
            for impl in IMPLS[op.kind]:
                m = results.get((op.name, impl), Measurement(None, "not measured (op_peers missing or crashed)"))
                rows.append(OpRow(op, t, impl, m, checks.get(op.name, "n/a") if impl == "tessel" else ""))
    notes += ["op_peers: " + i for i in infos]
    for r in rows:
        if r.m.timing is None:
            note = f"{r.op.name} {r.impl}: n/a: {r.m.reason}"
            if note not in notes:
                notes.append(note)
    return rows, notes


def ops_table(rows: List[OpRow], peak_per_core: float) -> str:
    headers = ["op", "thr", "impl", "median ms", "min ms", "reps", "GFLOP/s", "%peak", "tessel/impl",
               "tessel max rel err"]
    tessel_ms = {(r.op.name, r.threads): r.m.timing.median_ms for r in rows if r.impl == "tessel" and r.m.timing}
    out = []
    for r in rows:
        t = r.m.timing
        rate = None if t is None else r.op.gflop / (t.median_ms / 1e3)
        pct = None if rate is None else 100 * rate / (peak_per_core * r.threads)
        rel = "" if r.impl == "tessel" else ratio(tessel_ms.get((r.op.name, r.threads)), t and t.median_ms)
        out.append([r.op.name, str(r.threads), r.impl, fmt(t and t.median_ms, ".3f"), fmt(t and t.min_ms, ".3f"),
                    "n/a" if t is None else str(t.reps), fmt(rate, ".1f"), fmt(pct, ".1f"), rel, r.check])
    return table(headers, out)
