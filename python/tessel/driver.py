"""The compiler in this process (the driver, through the pybind11 module tessel._driver):
compile an ONNX model and run it on numpy arrays or export it to a model.so, inspect a model,
check it against the reference executor. The `tessel` command calls the same driver functions.

    import numpy as np, tessel
    m = tessel.compile("model.onnx", target="llvm", input_shapes={"x": (1, 3, 224, 224)})
    out = m.run({"x": np.zeros((1, 3, 224, 224), np.float32)})
    m.export("model.so")                     # then tessel.load("model.so") anywhere
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
from pathlib import Path
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from .errors import TesselError
from .model import KernelInfo, TensorInfo

_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "float64": "f64", "int8": "i8", "uint8": "u8",
                "int32": "i32", "int64": "i64", "bool": "bool", "int16": "i16", "uint16": "u16",
                "uint32": "u32", "uint64": "u64"}


def _load_driver():
    try:
        from . import _driver
        return _driver
    except ImportError:
        pass
    # A source checkout used through PYTHONPATH=python: the module in the build tree.
    build = Path(os.environ.get("TESSEL_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
    for path in sorted((build / "python" / "tessel").glob("_driver*.so")):
        spec = importlib.util.spec_from_file_location("tessel._driver", path)
        if spec and spec.loader and importlib.machinery.EXTENSION_SUFFIXES[0] in path.name:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise TesselError("the compiler driver (tessel._driver) is not in this installation: `pip install ./python` "
                      "from a Tessel checkout builds it; tessel.load() of a model.so works without it")


def _call(fn, *args):
    driver = _load_driver()
    try:
        return fn(driver)(*args)
    except driver.UserError as e:
        raise TesselError(str(e)) from None


def _shapes(input_shapes: Optional[Mapping[str, Sequence[int]]]) -> Dict[str, List[int]]:
    return {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}


def _info(spec) -> TensorInfo:
    name, dtype, shape = spec
    return TensorInfo(name, np.dtype(dtype), tuple(shape), _DTYPE_NAMES[dtype])


class CompiledModel:
    """A model compiled in this process for the target, ready to run on numpy arrays."""

    def __init__(self, compiled, path: str):
        self._compiled = compiled
        self.path = path
        self.inputs: List[TensorInfo] = [_info(s) for s in compiled.inputs]
        self.outputs: List[TensorInfo] = [_info(s) for s in compiled.outputs]
        self.kernels: List[KernelInfo] = [KernelInfo(*k) for k in compiled.kernels]

    def run(self, feeds: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """Runs the model: feeds maps every input name to an array of its dtype and shape."""
        return _call(lambda d: self._compiled.run, dict(feeds))

    def export(self, path: str) -> str:
        """Writes the model as a self-contained shared library (what `tessel compile` writes)."""
        if str(path).endswith(".onnx"):
            raise TesselError(f"{path}: export writes a shared library, not an ONNX model (use a .so name)")
        _call(lambda d: self._compiled.export_library, str(path))
        return str(path)

    def __repr__(self) -> str:
        return f"CompiledModel({self.path!r}, {len(self.kernels)} kernels)"


def compile(model: str, target: str = "llvm", fusion: str = "default", schedule: str = "default",
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
            tuning_log: Optional[str] = None) -> CompiledModel:
    """Compiles an ONNX model in this process (target "llvm", "llvm -mcpu=znver3", ...); with tuning_log, each
    kernel whose task the log tuned gets its fastest measured schedule (tessel.tune)."""
    compiled = _call(lambda d: d.Compiled, str(model), _shapes(input_shapes), target, fusion, schedule,
                     str(tuning_log or ""))
    return CompiledModel(compiled, str(model))


def inspect(model: str, input_shapes: Optional[Mapping[str, Sequence[int]]] = None) -> str:
    """What `tessel inspect` prints: ops, inputs and outputs, parameters and FLOPs."""
    return _call(lambda d: d.inspect, str(model), _shapes(input_shapes))


class CheckResult(NamedTuple):
    passed: bool
    failures: int  # outputs (and, with per_kernel, kernels) that failed
    report: str    # what `tessel check` prints


def check(model: str, target: str = "llvm", fusion: str = "default", schedule: str = "default",
          per_kernel: bool = False, seed: int = 0, tolerance: float = 1e-4,
          input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
          tuning_log: Optional[str] = None) -> CheckResult:
    """Compiles the model, runs it and the reference executor on the same seeded inputs, compares."""
    failures, report = _call(lambda d: d.check, str(model), _shapes(input_shapes), target, fusion, schedule,
                             per_kernel, int(seed), float(tolerance), str(tuning_log or ""))
    return CheckResult(failures == 0, failures, report)


def fusion_report(model: str, policies: Optional[Sequence[str]] = None, threads: int = 0, repeat: int = 30,
                  seed: int = 0, target: str = "llvm", input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
                  output_dir: Optional[str] = None, tuning_log: Optional[str] = None) -> dict:
    """What `tessel fusion-report` measures, as report.json holds it: the model compiled and profiled once per
    fusion policy (default: none, injective, simple, default, aggressive). With output_dir, report.md, report.json and
    report.html are written there too. With tuning_log, every policy's kernels get the schedules tune found, and
    policy "tuned" (added to the default list) takes the log's fusion decisions."""
    text = _call(lambda d: d.fusion_report, str(model), _shapes(input_shapes), target, list(policies or []),
                 int(threads), int(repeat), int(seed), str(output_dir or ""), str(tuning_log or ""))
    return json.loads(text)


def tune(model: str, log: str, trials: int = 1000, threads: int = 0, seed: int = 0, resume: bool = False,
         search: str = "model", per_round: int = 8, fusion: str = "default", target: str = "llvm",
         input_shapes: Optional[Mapping[str, Sequence[int]]] = None, cost_model: Optional[str] = None,
         save_cost_model: Optional[str] = None, events: Optional[str] = None, layouts: str = "search",
         model_check: bool = True) -> dict:
    """What `tessel tune` does: tunes the model's kernels, appending every measured candidate to `log` (JSON lines),
    progress on stderr; Ctrl-C stops it with everything measured kept (the result says "interrupted"). Returns
    {"tasks": [{"key", "name", "runs", "flops", "default_ms", "best_ms", "applied_ms", "trials", "errors",
    "alternative_only", "left_out"}], "fusion": [...], "layouts": [...], "trials", "interrupted", "seconds",
    "default_ms", "tuned_ms", "in_model", "log"};
    compile(model, tuning_log=log) applies it. threads 0: every core. fusion="tuned" also decides, where the default
    and aggressive fusion policies group nodes otherwise, which grouping is faster: "fusion" lists each region's
    {"choice", "default_ms", "aggressive_ms", "default_ops", "aggressive_ops"}, and
    compile(model, fusion="tuned", tuning_log=log) applies them. layouts="search" (the default) also measures each
    conv in its other layouts: "layouts" lists each conv's {"conv", "choice" (an index into "measured"),
    "measured": [{"form", "align", "ms"}]}, which compile(model, tuning_log=log) applies; "default" keeps the
    default schedule's layouts. model_check (CPU): at the end the decisions are checked in the model itself, the
    libraries with and without the log run in alternation, and those slower in place are left out (a task's
    "left_out"); "in_model" is then {"default_ms", "tuned_ms", "checked", "left_out"}, else None."""
    return _call(lambda d: d.tune, str(model), _shapes(input_shapes), target, fusion, str(log), int(trials),
                 int(per_round), int(threads), int(seed), bool(resume), search, str(cost_model or ""),
                 str(save_cost_model or ""), str(events or ""), layouts, bool(model_check))
