"""ctypes declarations of the C ABI of a compiled model (include/tessel/runtime.h, ABI version 3)
and the map between its element types and numpy's."""
from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_double, c_int, c_int32, c_int64, c_uint32, c_void_p
from typing import Optional

import numpy as np

ABI_VERSION = 4

# tessel_dtype value -> (name, numpy dtype or None where numpy has no such type).
DTYPES = {
    0: ("f32", np.dtype(np.float32)),
    1: ("f16", np.dtype(np.float16)),
    2: ("bf16", None),
    3: ("f64", np.dtype(np.float64)),
    4: ("i8", np.dtype(np.int8)),
    5: ("u8", np.dtype(np.uint8)),
    6: ("i32", np.dtype(np.int32)),
    7: ("i64", np.dtype(np.int64)),
    8: ("bool", np.dtype(np.bool_)),
    9: ("i16", np.dtype(np.int16)),
    10: ("u16", np.dtype(np.uint16)),
    11: ("u32", np.dtype(np.uint32)),
    12: ("u64", np.dtype(np.uint64)),
    # The storage-only types: numpy has none (their codes can be passed as uint8).
    13: ("f8e4m3fn", None),
    14: ("f8e4m3fnuz", None),
    15: ("f8e5m2", None),
    16: ("f8e5m2fnuz", None),
    17: ("f8e8m0", None),
    18: ("f4e2m1", None),
    19: ("i4", None),
    20: ("u4", None),
    21: ("i2", None),
    22: ("u2", None),
}


def dtype_code(dtype: np.dtype) -> Optional[int]:
    """The tessel_dtype of a numpy dtype (native byte order only), or None."""
    for code, (_, np_dtype) in DTYPES.items():
        if np_dtype is not None and dtype == np_dtype:
            return code
    return None


class Tensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("dtype", c_int), ("rank", c_int32), ("shape", POINTER(c_int64))]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("rank", c_int32), ("shape", POINTER(c_int64))]


class KernelInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("flops", c_double), ("bytes", c_double)]


# Every function of runtime.h: name -> (restype, argtypes). Pointers to the opaque
# tessel_model and tessel_context travel as c_void_p.
_TENSORS = POINTER(Tensor)
FUNCTIONS = {
    "tessel_abi_version": (c_uint32, []),
    "tessel_version": (c_char_p, []),
    "tessel_last_error": (c_char_p, []),
    "tessel_model_load": (c_void_p, []),
    "tessel_model_unload": (None, [c_void_p]),
    "tessel_model_num_inputs": (c_int32, [c_void_p]),
    "tessel_model_num_outputs": (c_int32, [c_void_p]),
    "tessel_model_input_info": (c_int, [c_void_p, c_int32, POINTER(TensorInfo)]),
    "tessel_model_output_info": (c_int, [c_void_p, c_int32, POINTER(TensorInfo)]),
    "tessel_model_num_kernels": (c_int32, [c_void_p]),
    "tessel_model_kernel_info": (c_int, [c_void_p, c_int32, POINTER(KernelInfo)]),
    "tessel_model_arena_bytes": (c_int64, [c_void_p]),
    "tessel_model_device": (c_char_p, [c_void_p]),
    "tessel_context_create": (c_void_p, [c_void_p]),
    "tessel_context_destroy": (None, [c_void_p]),
    "tessel_context_run": (c_int, [c_void_p, _TENSORS, c_int32, _TENSORS, c_int32]),
    "tessel_context_run_profiled": (c_int, [c_void_p, _TENSORS, c_int32, _TENSORS, c_int32, POINTER(c_double)]),
    "tessel_context_run_device": (c_int, [c_void_p, _TENSORS, c_int32, _TENSORS, c_int32, c_void_p]),
    "tessel_set_num_threads": (c_int, [c_int32]),
    "tessel_get_num_threads": (c_int32, []),
    "tessel_model_output_dynamic_axis": (c_int32, [c_void_p, c_int32]),
    "tessel_context_output_shape": (c_int, [c_void_p, c_int32, POINTER(c_int64)]),
}


def missing_functions(lib: ctypes.CDLL) -> list:
    """The functions of runtime.h the library does not export."""
    return [name for name in FUNCTIONS if not hasattr(lib, name)]


def declare(lib: ctypes.CDLL) -> None:
    """Sets the argument and result types of every function of runtime.h on lib."""
    for name, (restype, argtypes) in FUNCTIONS.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
