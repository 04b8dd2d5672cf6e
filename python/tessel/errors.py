"""The one exception type of the package and the status codes of the C ABI (tessel/runtime.h)."""
from __future__ import annotations

import enum
from typing import Optional


class Status(enum.IntEnum):
    """tessel_status: what a failing C function returns."""

    OK = 0
    INVALID_ARGUMENT = 1
    SHAPE_MISMATCH = 2
    DTYPE_MISMATCH = 3
    OUT_OF_MEMORY = 4
    CORRUPT_MODEL = 5
    KERNEL_FAILED = 6
    UNSUPPORTED_CPU = 7
    UNSUPPORTED_DEVICE = 8


class TesselError(RuntimeError):
    """Any failure of the package: a bad library, bad feeds, or a C function's error.

    `status` is the Status the C library returned, or None when the check was made in Python."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status: Optional[Status | int] = None
        if status is not None:
            try:
                self.status = Status(status)
            except ValueError:
                self.status = status
