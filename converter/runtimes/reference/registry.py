"""Kernel registry of the reference backend: one kernel per WebNN op (or op family).

A kernel is called as `kernel(operation, args, options)` where every operand in the
operation's `args` and `options` has been replaced by its numpy value (in the operand's own
dtype). It returns one array per output; the executor rounds each once to the output's dtype
(`astype`), so kernels should compute floats in float64 and integers exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from converter.core.webnn.operand import Operation
from converter.core.webnn.operators import operator

Kernel = Callable[[Operation, list[Any], dict[str, Any]], Sequence[np.ndarray]]

KERNELS: dict[str, Kernel] = {}


def kernel(*ops: str) -> Callable[[Kernel], Kernel]:
    """Register the decorated function as the kernel of each op in `ops` (spec names of
    `converter.core.webnn.operators`; an unknown name is a ValueError)."""
    for op in ops:
        operator(op)

    def register(fn: Kernel) -> Kernel:
        for op in ops:
            if op in KERNELS:
                raise ValueError(f"reference kernel for {op} registered twice")
            KERNELS[op] = fn
        return fn

    return register


def f64(x: np.ndarray) -> np.ndarray:
    """Float arrays as float64; integer arrays as int64 (uint64 kept as uint64)."""
    if x.dtype.kind == "f":
        return x.astype(np.float64)
    if x.dtype == np.uint64:
        return x
    return x.astype(np.int64)
