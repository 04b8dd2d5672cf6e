"""tessel.load and Model: a compiled model.so behind numpy arrays.

A Model owns the loaded tessel_model and one tessel_context per Python thread
that ran it, so threads run the same Model concurrently (ctypes releases the
GIL during each C call)."""
from __future__ import annotations

import ctypes
import os
import statistics
import threading
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _abi
from .errors import Status, TesselError


class TensorInfo(NamedTuple):
    """An input or output of the model. dtype is None for bf16, which numpy has no type for;
    dtype_name is the C ABI's name ("f32", "bf16", ...)."""

    name: str
    dtype: Optional[np.dtype]
    shape: Tuple[int, ...]
    dtype_name: str


class KernelInfo(NamedTuple):
    """One kernel of the execution plan: floating-point operations and parameter bytes of one run."""

    name: str
    flops: float
    bytes: float


class KernelTime(NamedTuple):
    """A kernel of Model.profile: the median of its wall times over the repeated runs, in seconds."""

    name: str
    seconds: float
    flops: float
    bytes: float


def load(path: str | os.PathLike) -> "Model":
    """Loads a model library written by `tessel compile`. Raises TesselError if the file is missing,
    is not a shared library, is not a Tessel model of ABI version 1, or its model fails to load."""
    return Model(path)


def _open_library(path: str) -> ctypes.CDLL:
    if not os.path.isfile(path):
        raise TesselError(f"{path}: no such file")
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    except OSError as e:
        raise TesselError(f"{path} is not a Tessel model library: it cannot be loaded ({e})") from None
    if not hasattr(lib, "tessel_abi_version"):
        raise TesselError(f"{path} is not a Tessel model library: it has no tessel_abi_version symbol")
    lib.tessel_abi_version.restype = ctypes.c_uint32
    lib.tessel_abi_version.argtypes = []
    version = lib.tessel_abi_version()
    if version != _abi.ABI_VERSION:
        raise TesselError(f"{path} is not a Tessel model library of ABI version {_abi.ABI_VERSION}: "
                          f"it has version {version}")
    missing = _abi.missing_functions(lib)
    if missing:
        raise TesselError(f"{path} is not a Tessel model library: it lacks {', '.join(missing)}")
    _abi.declare(lib)
    return lib


class Model:
    """A loaded model. Use tessel.load(path); close() (or a with block) frees it."""

    def __init__(self, path: str | os.PathLike):
        # An absolute path: dlopen would search the library path for a bare "model.so".
        self.path = os.path.abspath(os.fspath(path))
        self._lib = _open_library(self.path)
        self._model: Optional[int] = None
        self._lock = threading.Condition()
        self._active_runs = 0
        self._closing = False
        self._local = threading.local()
        self._contexts: List[Tuple[threading.Thread, int]] = []
        model = self._lib.tessel_model_load()
        if not model:
            raise TesselError(f"{self.path}: tessel_model_load failed: {self._last_error()}")
        self._model = model
        try:
            self._read_info()
        except BaseException:
            self.close()
            raise

    # ---- what the model is -------------------------------------------------------------------

    @property
    def inputs(self) -> List[TensorInfo]:
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorInfo]:
        return list(self._outputs)

    @property
    def kernels(self) -> List[KernelInfo]:
        return list(self._kernels)

    @property
    def arena_bytes(self) -> int:
        return self._arena_bytes

    @property
    def device(self) -> str:
        """What the kernels run on: "cpu", or "cuda: " and the GPU's name."""
        return self._device

    @property
    def version(self) -> str:
        """The Tessel release that compiled the library."""
        return self._lib.tessel_version().decode()

    def set_num_threads(self, num_threads: int) -> None:
        """Sets the worker threads of this library's thread pool (shared by every Model of the same file)."""
        if isinstance(num_threads, bool) or not isinstance(num_threads, int):
            raise TesselError(f"set_num_threads: expected an int, got {type(num_threads).__name__}")
        if not -2**31 <= num_threads < 2**31:
            raise TesselError(f"set_num_threads: {num_threads} threads is out of range")
        self._check(self._lib.tessel_set_num_threads(num_threads), "tessel_set_num_threads")

    def get_num_threads(self) -> int:
        n = self._lib.tessel_get_num_threads()
        if n < 1:
            raise TesselError(f"tessel_get_num_threads failed: {self._last_error()}")
        return n

    # ---- running -----------------------------------------------------------------------------

    def run(self, feeds: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """Runs the model once on feeds (input name -> array of the model's dtype and shape; a 0-d
        input takes a 0-d array or a numpy scalar). Returns the outputs, freshly allocated, in the
        model's order (an output the model lists twice appears once), 0-d outputs as 0-d arrays."""
        return self._run(feeds, None)

    def run_device(self, inputs: Sequence[int], outputs: Sequence[int], stream: int = 0) -> None:
        """Runs a GPU model on device memory: inputs and outputs are device pointers (ints, such as
        torch's Tensor.data_ptr()) to buffers of the model's dtypes and shapes, in the model's order;
        the work is queued on the CUstream `stream` (0: the default stream) and has run when this
        returns. A CPU model raises TesselError."""
        for kind, pointers, infos in (("inputs", inputs, self._inputs), ("outputs", outputs, self._outputs)):
            if len(pointers) != len(infos) or not all(isinstance(p, int) and not isinstance(p, bool)
                                                      for p in pointers):
                raise TesselError(f"run_device: expected {len(infos)} {kind} as int device pointers")
        keep_alive = []
        in_tensors = self._pointer_tensors(inputs, self._inputs, keep_alive)
        out_tensors = self._pointer_tensors(outputs, self._outputs, keep_alive)
        context = self._begin_run()
        try:
            status = self._lib.tessel_context_run_device(context, in_tensors, len(self._inputs), out_tensors,
                                                         len(self._outputs), stream or None)
        finally:
            self._end_run()
        self._check(status, "tessel_context_run_device")

    def run_profiled(self, feeds: Mapping[str, np.ndarray]) -> Tuple[Dict[str, np.ndarray], List[float]]:
        """Runs the model once, as run() does, and returns its outputs with each kernel's wall time
        of this run in seconds, in plan order (profile() takes the median of several)."""
        seconds = (ctypes.c_double * max(len(self._kernels), 1))()
        outputs = self._run(feeds, seconds)
        return outputs, [seconds[k] for k in range(len(self._kernels))]

    def profile(self, feeds: Mapping[str, np.ndarray], repeat: int = 10) -> List[KernelTime]:
        """Runs the model repeat times and returns each kernel's median wall time, in plan order."""
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise TesselError(f"profile: repeat must be a positive int, got {repeat!r}")
        samples = [[] for _ in self._kernels]
        for _ in range(repeat):
            for times, seconds in zip(samples, self.run_profiled(feeds)[1]):
                times.append(seconds)
        return [KernelTime(k.name, statistics.median(times), k.flops, k.bytes)
                for k, times in zip(self._kernels, samples)]

    def _run(self, feeds: Mapping[str, np.ndarray], kernel_seconds) -> Dict[str, np.ndarray]:
        arrays = self._check_feeds(feeds)
        # One array per output position: a model may list the same output twice, and the C side
        # writes outputs[0 .. num_outputs).
        out_arrays = [np.empty(o.shape, dtype=o.dtype) for o in self._outputs]
        keep_alive = []
        in_tensors = self._tensors([arrays[i.name] for i in self._inputs], keep_alive)
        out_tensors = self._tensors(out_arrays, keep_alive)
        context = self._begin_run()
        try:
            args = (context, in_tensors, len(self._inputs), out_tensors, len(self._outputs))
            if kernel_seconds is None:
                status = self._lib.tessel_context_run(*args)
            else:
                status = self._lib.tessel_context_run_profiled(*args, kernel_seconds)
            if status == 0:
                out_arrays = [self._cut_to_run_shape(context, j, a) for j, a in enumerate(out_arrays)]
        finally:
            self._end_run()
        self._check(status, "tessel_context_run")
        outputs = {}
        for info, array in zip(self._outputs, out_arrays):
            outputs.setdefault(info.name, array)
        return outputs

    def _cut_to_run_shape(self, context: int, index: int, array: np.ndarray) -> np.ndarray:
        """An output of data-dependent extent (NonZero, NonMaxSuppression, ...) as the run sized it:
        the run left it dense in the front of its buffer, which holds its upper bound."""
        if self._dynamic_axes[index] < 0:
            return array
        shape = (ctypes.c_int64 * max(array.ndim, 1))()
        self._check(self._lib.tessel_context_output_shape(context, index, shape), "tessel_context_output_shape")
        dims = tuple(shape[d] for d in range(array.ndim))
        return array.reshape(-1)[:int(np.prod(dims))].reshape(dims).copy()

    def _check_feeds(self, feeds: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
        if not isinstance(feeds, Mapping):
            raise TesselError(f"run: feeds must be a dict of input name -> array, got {type(feeds).__name__}")
        expected = [i.name for i in self._inputs]
        unknown = [name for name in feeds if name not in expected]
        if unknown:
            raise TesselError(f"run: unknown input {unknown[0]!r}; the model's inputs are {expected}")
        for info in self._inputs + self._outputs:
            if info.dtype is None:
                raise TesselError(f"{info.name!r} is a bf16 tensor, which numpy has no type for; "
                                  "the tessel package cannot run this model")
        arrays = {}
        for info in self._inputs:
            if info.name not in feeds:
                raise TesselError(f"run: missing input {info.name!r}; the model's inputs are {expected}")
            array = np.asarray(feeds[info.name])
            if array.dtype != info.dtype:
                raise TesselError(f"input {info.name!r}: expected dtype {info.dtype} ({info.dtype_name}), "
                                  f"got {array.dtype}; convert it with .astype(np.{info.dtype.name})")
            # Not np.ascontiguousarray: it makes a 0-d array 1-d.
            arrays[info.name] = np.asarray(array, order="C")
        return arrays

    @staticmethod
    def _tensors(arrays, keep_alive):
        """A ctypes array of one tessel_tensor per array (C-contiguous); keep_alive holds the shapes."""
        tensors = (_abi.Tensor * max(len(arrays), 1))()
        for k, array in enumerate(arrays):
            shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            keep_alive.append(shape)
            tensors[k] = _abi.Tensor(array.ctypes.data, _abi.dtype_code(array.dtype), array.ndim, shape)
        return tensors

    @staticmethod
    def _pointer_tensors(pointers, infos, keep_alive):
        """A ctypes array of one tessel_tensor per pointer, with the model's dtype and shape."""
        codes = {name: code for code, (name, _) in _abi.DTYPES.items()}
        tensors = (_abi.Tensor * max(len(pointers), 1))()
        for k, (pointer, info) in enumerate(zip(pointers, infos)):
            shape = (ctypes.c_int64 * max(len(info.shape), 1))(*info.shape)
            keep_alive.append(shape)
            tensors[k] = _abi.Tensor(pointer, codes[info.dtype_name], len(info.shape), shape)
        return tensors

    # ---- contexts and lifetime -----------------------------------------------------------------

    def _begin_run(self) -> int:
        """The calling thread's context (made on its first run); counts the run as active."""
        with self._lock:
            if self._model is None or self._closing:
                raise TesselError(f"{self.path}: the model is closed")
            context = getattr(self._local, "context", None)
            if context is None:
                context = self._create_context()
                self._local.context = context
            self._active_runs += 1
            return context

    def _end_run(self) -> None:
        with self._lock:
            self._active_runs -= 1
            if self._active_runs == 0:
                self._lock.notify_all()

    def _create_context(self) -> int:
        # Contexts of threads that have ended can run no more: free them first (lock held).
        alive = []
        for thread, context in self._contexts:
            if thread.is_alive():
                alive.append((thread, context))
            else:
                self._lib.tessel_context_destroy(context)
        self._contexts = alive
        context = self._lib.tessel_context_create(self._model)
        if not context:
            raise TesselError(f"{self.path}: tessel_context_create failed: {self._last_error()}")
        self._contexts.append((threading.current_thread(), context))
        return context

    def close(self) -> None:
        """Waits for runs in progress, then frees the contexts and the model. Idempotent."""
        with self._lock:
            if self._model is None or self._closing:
                return
            self._closing = True
            while self._active_runs > 0:
                self._lock.wait()
            for _, context in self._contexts:
                self._lib.tessel_context_destroy(context)
            self._contexts = []
            self._lib.tessel_model_unload(self._model)
            self._model = None
            self._closing = False

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        # __init__ may have failed before the attributes existed; at interpreter exit close may fail too.
        try:
            if getattr(self, "_model", None) is not None:
                self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._model is None else f"{len(self._inputs)} inputs, {len(self._outputs)} outputs"
        return f"<tessel.Model {self.path} ({state})>"

    # ---- reading the C side --------------------------------------------------------------------

    def _last_error(self) -> str:
        message = self._lib.tessel_last_error()
        return message.decode(errors="replace") if message else "(no message)"

    def _check(self, status: int, function: str) -> None:
        if status == 0:
            return
        try:
            name = f"TESSEL_ERR_{Status(status).name}"
        except ValueError:
            name = f"status {status}"
        raise TesselError(f"{function} failed ({name}): {self._last_error()}", status)

    def _read_info(self) -> None:
        lib, m = self._lib, self._model
        self._inputs = self._read_tensors(lib.tessel_model_num_inputs(m), lib.tessel_model_input_info, "input")
        self._outputs = self._read_tensors(lib.tessel_model_num_outputs(m), lib.tessel_model_output_info, "output")
        # The axis of each output that a run sizes (-1: its shape is fixed; its info gives the bound).
        self._dynamic_axes = [lib.tessel_model_output_dynamic_axis(m, j) for j in range(len(self._outputs))]
        num_kernels = lib.tessel_model_num_kernels(m)
        if num_kernels < 0:
            raise TesselError(f"{self.path}: tessel_model_num_kernels failed: {self._last_error()}")
        self._kernels = []
        for k in range(num_kernels):
            info = _abi.KernelInfo()
            self._check(lib.tessel_model_kernel_info(m, k, ctypes.byref(info)), "tessel_model_kernel_info")
            self._kernels.append(KernelInfo(self._decode(info.name), info.flops, info.bytes))
        self._arena_bytes = lib.tessel_model_arena_bytes(m)
        if self._arena_bytes < 0:
            raise TesselError(f"{self.path}: tessel_model_arena_bytes failed: {self._last_error()}")
        device = lib.tessel_model_device(m)
        if device is None:
            raise TesselError(f"{self.path}: tessel_model_device failed: {self._last_error()}")
        self._device = self._decode(device)

    def _read_tensors(self, count: int, info_fn, kind: str) -> List[TensorInfo]:
        if count < 0:
            raise TesselError(f"{self.path}: counting the {kind}s failed: {self._last_error()}")
        tensors = []
        for k in range(count):
            info = _abi.TensorInfo()
            self._check(info_fn(self._model, k, ctypes.byref(info)), f"tessel_model_{kind}_info")
            name = self._decode(info.name)
            if info.dtype not in _abi.DTYPES:
                raise TesselError(f"{self.path}: {kind} {name!r} has an unknown dtype {info.dtype}")
            if not 0 <= info.rank <= 64 or (info.rank > 0 and not info.shape):
                raise TesselError(f"{self.path}: {kind} {name!r} has an invalid rank {info.rank}")
            shape = tuple(int(info.shape[d]) for d in range(info.rank))
            dtype_name, dtype = _abi.DTYPES[info.dtype]
            tensors.append(TensorInfo(name, dtype, shape, dtype_name))
        return tensors

    @staticmethod
    def _decode(name: Optional[bytes]) -> str:
        return name.decode(errors="replace") if name is not None else ""
