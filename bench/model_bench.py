"""The models section: Tessel's untuned compiled latency of the exported models against ONNX Runtime
and PyTorch eager, in this process, at each thread count."""
from __future__ import annotations

import importlib.util
import json
import os
from typing import List, NamedTuple, Optional

import numpy as np

from common import REPO, Settings, TesselCompiler, Timing, fmt, max_rel_err, ratio, table, time_runs

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder_layer"]
# Built with onnx.helper (scripts/build_op_models.py): ONNX Runtime is their only peer; asked for by name.
BUILT_MODELS = ["decoder_block", "upsampling_head", "speech_lstm", "refine_and_choose"]


class ModelRow(NamedTuple):
    model: str
    threads: int
    gflop: Optional[float]
    tessel: Optional[Timing]
    ort: Optional[Timing]
    torch: Optional[Timing]
    err_vs_ort: Optional[float]


def _export_module():
    """scripts/export_models.py as a module: its MODELS builders make the PyTorch peers."""
    spec = importlib.util.spec_from_file_location("export_models", os.path.join(REPO, "scripts", "export_models.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Peers:
    """ONNX Runtime and PyTorch, each either usable or n/a with the reason."""

    def __init__(self):
        self.notes: List[str] = []
        try:
            import onnxruntime
            self.ort = onnxruntime
            self.notes.append(f"onnxruntime {onnxruntime.__version__} (CPUExecutionProvider, "
                              "intra_op_num_threads = threads, inter_op_num_threads = 1, default optimizations)")
        except ImportError as e:
            self.ort = None
            self.notes.append(f"onnxruntime n/a: {e}")
        try:
            import torch
            self.torch = torch
            self.export = _export_module()
            # Set once, before any parallel work (PyTorch refuses it later); the models run
            # one op at a time, so only the intra-op threads matter.
            torch.set_num_interop_threads(1)
            self.notes.append(f"torch {torch.__version__} eager (torch.no_grad, torch.set_num_threads(threads); "
                              "modules rebuilt with scripts/export_models.py's builders, their own random weights; "
                              "the encoder layer takes PyTorch's fused inference fast path under no_grad)")
        except Exception as e:  # ImportError, or the export script failing to import
            self.torch = None
            self.notes.append(f"torch n/a: {e}")

    def ort_session(self, path: str, threads: int):
        options = self.ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
        return self.ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def torch_module(self, name: str):
        builder = self.export.MODELS[name][0]
        self.torch.manual_seed(self.export.SEED)
        module = builder()
        module.eval()
        return module


def _time_or_none(label: str, fn, settings: Settings, notes: List[str]) -> Optional[Timing]:
    try:
        return time_runs(fn, settings)
    except Exception as e:
        notes.append(f"{label}: n/a: {type(e).__name__}: {e}")
        return None


def bench_models(names: List[str], models_dir: str, compiler: TesselCompiler, threads_list: List[int],
                 settings: Settings, log) -> (List[ModelRow], List[str]):
    import tessel  # the numpy wrapper, from REPO/python (cpu_bench.py puts it on sys.path)

    manifest_path = os.path.join(models_dir, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    peers = Peers()
    notes = list(peers.notes)
    rows: List[ModelRow] = []
    for name in names:
        entry = manifest.get(name)
        onnx_path = os.path.join(models_dir, name + ".onnx")
        if entry is None or not os.path.exists(onnx_path):
            notes.append(f"{name}: not exported (run scripts/export_models.py with the venv's python)")
            continue
        rng = np.random.default_rng(0)
        feeds = {spec["name"]: rng.standard_normal(spec["shape"]).astype(np.float32) for spec in entry["inputs"]}
        x = next(iter(feeds.values()))

        log(f"compiling {name} with tessel ...")
        compiled = compiler.compile(onnx_path, name)
        model, gflop = None, None
        if compiled.so_path is None:
            notes.append(f"{name}: tessel compile failed ({compiled.seconds:.1f} s): {compiled.error}")
        else:
            try:
                model = tessel.load(compiled.so_path)
                gflop = sum(k.flops for k in model.kernels) / 1e9
                how = "cached" if compiled.seconds is None else f"compiled in {compiled.seconds:.1f} s"
                notes.append(f"{name}: tessel library {how}, {len(model.kernels)} kernels, "
                             f"{gflop:.3f} GFLOP per run (sum of the kernels' FLOPs), arena {model.arena_bytes} B")
            except Exception as e:
                notes.append(f"{name}: tessel load failed: {e}")
        torch_module = None
        if peers.torch is not None and name in BUILT_MODELS:
            notes.append(f"{name}: built with onnx.helper, no PyTorch module")
        elif peers.torch is not None:
            try:
                torch_module = peers.torch_module(name)
            except Exception as e:
                notes.append(f"{name}: torch module n/a: {e}")

        for t in threads_list:
            log(f"timing {name} at {t} thread(s) ...")
            tessel_t = ort_t = torch_t = err = None
            tessel_out = ort_out = None
            if model is not None:
                model.set_num_threads(t)
                tessel_t = _time_or_none(f"{name} tessel", lambda: model.run(feeds), settings, notes)
                if tessel_t is not None:  # checked at each thread count: parallel reductions differ
                    tessel_out = next(iter(model.run(feeds).values()))
            if peers.ort is not None:
                try:
                    session = peers.ort_session(onnx_path, t)
                    ort_t = _time_or_none(f"{name} onnxruntime", lambda: session.run(None, feeds), settings, notes)
                    if tessel_out is not None:
                        ort_out = session.run(None, feeds)[0]
                    del session  # frees its thread pool before the next peer runs
                except Exception as e:
                    notes.append(f"{name}: onnxruntime n/a: {e}")
            if torch_module is not None:
                torch = peers.torch
                torch.set_num_threads(t)
                xt = torch.from_numpy(x)

                def run_torch():
                    with torch.no_grad():
                        return torch_module(xt)

                torch_t = _time_or_none(f"{name} torch", run_torch, settings, notes)
            if tessel_out is not None and ort_out is not None:
                err = max_rel_err(tessel_out, ort_out)
            rows.append(ModelRow(name, t, gflop, tessel_t, ort_t, torch_t, err))
        if model is not None:
            model.close()
    return rows, notes


def models_table(rows: List[ModelRow], peak_per_core: float) -> str:
    headers = ["model", "thr", "tessel ms", "(min)", "ORT ms", "torch ms", "tessel/ORT", "tessel/torch",
               "GFLOP", "tessel GFLOP/s", "tessel %peak", "ORT %peak", "err vs ORT"]
    out = []
    for r in rows:
        med = lambda timing: None if timing is None else timing.median_ms  # noqa: E731
        rate = lambda timing: (None if timing is None or r.gflop is None  # noqa: E731
                               else r.gflop / (timing.median_ms / 1e3))
        peak = peak_per_core * r.threads
        pct = lambda timing: None if rate(timing) is None else 100 * rate(timing) / peak  # noqa: E731
        out.append([r.model, str(r.threads), fmt(med(r.tessel), ".2f"),
                    fmt(None if r.tessel is None else r.tessel.min_ms, ".2f"), fmt(med(r.ort), ".2f"),
                    fmt(med(r.torch), ".2f"), ratio(med(r.tessel), med(r.ort)), ratio(med(r.tessel), med(r.torch)),
                    fmt(r.gflop, ".3f"), fmt(rate(r.tessel), ".1f"), fmt(pct(r.tessel), ".1f"),
                    fmt(pct(r.ort), ".1f"), fmt(r.err_vs_ort, ".1e")])
    return table(headers, out)
