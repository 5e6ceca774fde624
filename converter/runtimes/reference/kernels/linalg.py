"""Reference kernels: matmul and gemm, as float64 products rounded once to the output type.
gemm's `alpha` and `beta` are first cast to the operand data type, as the spec requires."""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.webnn.dtypes import cast_number
from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import f64, kernel


@kernel("matmul")
def matmul(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [np.matmul(f64(args[0]), f64(args[1]))]


@kernel("gemm")
def gemm(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    dtype = op.outputs[0].data_type
    a, b = f64(args[0]), f64(args[1])
    if options["aTranspose"]:
        a = a.T
    if options["bTranspose"]:
        b = b.T
    alpha = float(cast_number(options["alpha"], dtype))
    with np.errstate(all="ignore"):
        y = np.matmul(a, b)
        if alpha != 1.0:
            y = alpha * y
        if "c" in options:
            beta = float(cast_number(options["beta"], dtype))
            y = y + beta * f64(options["c"])
    return [y]
