"""Tessel's Python package: compile an ONNX model and run it on numpy arrays (tessel.compile, through
the compiler driver), or load a model compiled by Tessel (model.so) and run it (tessel.load, ctypes).

    import numpy as np, tessel
    m = tessel.compile("model.onnx", input_shapes={"x": (1, 3, 224, 224)})
    outputs = m.run({"x": np.zeros((1, 3, 224, 224), np.float32)})
    m.export("model.so")
    tessel.tune("model.onnx", log="model.tune.jsonl", trials=200)   # then compile(..., tuning_log=...)
    with tessel.load("model.so") as model:
        outputs = model.run({"x": np.zeros((1, 3, 224, 224), np.float32)})
"""
from .errors import Status, TesselError
from .model import KernelInfo, KernelTime, Model, TensorInfo, load
from .driver import CheckResult, CompiledModel, check, compile, fusion_report, inspect, tune

__version__ = "0.1.0"
__all__ = ["CheckResult", "CompiledModel", "KernelInfo", "KernelTime", "Model", "Status", "TensorInfo",
           "TesselError", "check", "compile", "fusion_report", "inspect", "load", "tune"]
