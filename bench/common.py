"""Helpers shared by the benchmark's sections: timing, `tessel compile` with a cache, tables."""
from __future__ import annotations

import hashlib
import os
import subprocess
import time
from typing import Callable, Iterator, List, NamedTuple, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("TESSEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "tessel"))
# Pause between two implementations' timings: with 2 cores, the worker threads of the library
# timed before (OpenMP, ORT and BLAS pools spin for a while after a run) would steal one.
SETTLE_SECONDS = 0.2


class Timing(NamedTuple):
    reps: int
    median_ms: float
    min_ms: float


class Settings(NamedTuple):
    """How each measurement repeats: warm-up runs, then up to `repeat` timed runs, stopping early
    (after at least 3) once `budget_s` seconds are spent, so that a slow untuned kernel cannot
    stall the whole benchmark."""

    repeat: int
    warmup: int
    budget_s: float


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def time_runs(fn: Callable[[], object], settings: Settings) -> Timing:
    """Times fn as op_peers.cpp's time_it does, so both sections measure the same way."""
    time.sleep(SETTLE_SECONDS)
    for _ in range(settings.warmup):
        fn()
    ms: List[float] = []
    start = time.perf_counter()
    while len(ms) < settings.repeat:
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        ms.append((t1 - t0) * 1e3)
        if len(ms) >= min(3, settings.repeat) and t1 - start > settings.budget_s:
            break
    return Timing(len(ms), median(ms), min(ms))


def file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class CompileResult(NamedTuple):
    so_path: Optional[str]   # None when the compile failed
    seconds: Optional[float]  # None when the library came from the cache
    error: str                # the compiler's message when it failed


class TesselCompiler:
    """Runs `tessel compile X.onnx -o X.so` (untuned: the default schedule). Libraries are cached
    in the work folder under a key of the contents of the tessel binary, its model runtime archive
    and the model, so a rerun with an unchanged compiler skips the (slow) compile;
    --no-compile-cache turns that off."""

    def __init__(self, binary: str, work_dir: str, env: dict, use_cache: bool):
        self.binary = binary
        self.work_dir = work_dir
        self.env = env
        self.use_cache = use_cache
        # The libraries embed the model runtime archive too, which a rebuild may change alone.
        archive = env.get("TESSEL_MODEL_RUNTIME_ARCHIVE") or os.path.join(
            os.path.dirname(os.path.dirname(os.path.abspath(binary))), "runtime", "libtessel_model_runtime.a")
        self._binary_digest = file_digest(binary) + (file_digest(archive) if os.path.exists(archive) else "")

    def version(self) -> str:
        try:
            out = subprocess.run([self.binary, "version"], capture_output=True, text=True, timeout=60, env=self.env)
            lines = out.stdout.strip().splitlines()
            # "tessel 0.1.0" and "host ... cpu znver4, N features": the CPU LLVM compiles for.
            return "; ".join(l for k, l in enumerate(lines) if k == 0 or l.startswith("host")) or "?"
        except (OSError, subprocess.SubprocessError) as e:
            return f"? ({e})"

    def compile(self, onnx_path: str, name: str) -> CompileResult:
        key = hashlib.sha256((self._binary_digest + file_digest(onnx_path)).encode()).hexdigest()[:16]
        so_path = os.path.join(self.work_dir, "lib", f"{name}-{key}.so")
        if self.use_cache and os.path.exists(so_path):
            return CompileResult(so_path, None, "")
        os.makedirs(os.path.dirname(so_path), exist_ok=True)
        # Older libraries of this name were compiled by another tessel binary: drop them.
        for old in os.listdir(os.path.dirname(so_path)):
            if old.startswith(name + "-") and old.endswith(".so"):
                os.remove(os.path.join(os.path.dirname(so_path), old))
        tmp = so_path + ".tmp.so"
        start = time.perf_counter()
        try:
            proc = subprocess.run([self.binary, "compile", onnx_path, "-o", tmp], capture_output=True, text=True,
                                  env=self.env)
        except OSError as e:  # e.g. the binary is being rebuilt under us
            return CompileResult(None, time.perf_counter() - start, f"cannot run {self.binary}: {e}")
        seconds = time.perf_counter() - start
        if proc.returncode != 0 or not os.path.exists(tmp):
            message = (proc.stderr.strip() or proc.stdout.strip() or "no message").splitlines()
            return CompileResult(None, seconds, f"exit code {proc.returncode}: " + " | ".join(message[-5:]))
        os.replace(tmp, so_path)
        return CompileResult(so_path, seconds, "")


def max_rel_err(got, ref) -> float:
    """max|got - ref| / max|ref|: relative to the output's scale, not per element (near-zero
    elements would make a per-element ratio meaningless). NaN or Inf in got gives inf."""
    import numpy as np
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return float("inf")
    diff = np.abs(got - ref)
    if not np.all(np.isfinite(diff)):
        return float("inf")
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    return float(diff.max() / scale) if scale > 0 else float(diff.max(initial=0.0))


def fmt(value: Optional[float], spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def ratio(a: Optional[float], b: Optional[float]) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if k == 0 else str(c).rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def exported_models(names: Sequence[str]) -> Iterator[tuple[int, str, str]]:
    """(index, name, path) of each model scripts/export_models.py wrote to CACHE/models; a missing one is
    reported on stderr and skipped."""
    import sys
    for index, name in enumerate(names):
        path = os.path.join(CACHE, "models", name + ".onnx")
        if os.path.exists(path):
            yield index, name, path
        else:
            print(f"{name}: not exported ({path}); skipped", file=sys.stderr)
