"""Tessel's Python package: load a model compiled by Tessel (model.so) and run it on numpy arrays.

    import numpy as np, tessel
    with tessel.load("model.so") as model:
        outputs = model.run({"x": np.zeros((1, 3, 224, 224), np.float32)})
"""
from .errors import Status, TesselError
from .model import KernelInfo, KernelTime, Model, TensorInfo, load

__version__ = "0.1.0"
__all__ = ["KernelInfo", "KernelTime", "Model", "Status", "TensorInfo", "TesselError", "load"]
