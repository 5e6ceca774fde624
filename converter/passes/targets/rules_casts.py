"""Casts for data types a target lacks where widening is not exact (see
`converter.passes.targets.passes`; `rules_types.widen-types` does the exact cases):

- `float32-compute`: an operation on float16 that the target's limits lack in float16 but
  have in float32 runs in float32 (float16 operands cast up, constants converted at
  conversion time, results cast back to float16). The results are what float32 arithmetic
  gives, rounded once to float16 (at least as accurate as float16 arithmetic; not
  bit-identical to it);
- `dequantize-widen`: dequantizeLinear whose input/zeroPoint type the target lacks (the
  4-bit types, say) on the nearest integer type the limits allow that holds every value
  (int8/uint8 -> int32; uint32 -> int32 for constants whose values fit): (x - zeroPoint) *
  scale is the same number. Constants (weights) are converted at conversion time, other
  operands by a cast. (uint4 constants: `rules_quant.dequantize-uint4`.)

- `fold-constant-cast`: a cast of a constant the graph holds, computed at conversion time
  with the reference runtime's cast (the spec's rounding, saturation and NaN handling); the
  new constant replaces the cast (the input constant stays in the weights only when
  something else reads it).

Restrictions: float32-compute needs `cast` between float16 and float32 in the limits;
dequantize-widen converts 4-bit operands only when they are constants (no cast from a 4-bit
type is assumed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import FOUR_BIT_TYPES, STORAGE_TYPES
from converter.core.webnn.limits import OP_LIMITS
from converter.core.webnn.operand import Operation
from converter.passes.targets.fitting import Decline, attempt, fits
from converter.passes.targets.rewrite import Rewrite, rule
from converter.passes.targets.rules_types import plan_types, run_as
from converter.runtimes.reference.kernels.elementwise import cast as reference_cast

COMPUTE_WIDER: Mapping[str, Sequence[str]] = {"float16": ("float32",)}
"""Types an operation may compute in instead (not exact: float16 computed in float32)."""
QUANT_WIDER: Mapping[str, Sequence[str]] = {
    "int8": ("int32",), "uint8": ("int32",), "uint32": ("int32",)}
"""Integer types dequantizeLinear may read instead, nearest first (each holds every value
of the narrow type; uint32 -> int32 only for constants whose values fit)."""
FLOAT_OPS = tuple(sorted(op for op, roles in OP_LIMITS.items()
                         if any("float16" in t.data_types for t in roles.values())))


@rule("float32-compute", *FLOAT_OPS, limits=True,
      why="the target's opSupportLimits() lack it in float16; computed in float32")
def float32_compute(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A float16 operation the target lacks in float16, computed in float32 (see the module
    docstring)."""
    if not rw.limits or fits(rw, operation):
        return None
    plan = plan_types(rw, operation, COMPUTE_WIDER)
    if plan is None or set(plan) != {"float16"}:
        return None
    return attempt(rw, operation, "float32-compute",
                   f"{operation.op} computed in float32",
                   lambda: run_as(rw, operation, plan))


def _widened(rw: Rewrite, x: MLOperand, wide: str) -> MLOperand | None:
    """`x` as integer type `wide`: a constant converted now (None when a value does not
    fit), otherwise a cast (None from a 4-bit type)."""
    if x.kind == "constant" and x.value is not None:
        values = np.asarray(x.value).astype(np.int64)
        info = np.iinfo(STORAGE_TYPES.get(wide, wide))
        if values.size and (values.min() < info.min or values.max() > info.max):
            return None
        return rw.b.constant(values.astype(STORAGE_TYPES.get(wide, wide)), wide)
    if x.data_type in FOUR_BIT_TYPES:
        return None
    return rw.emit1("cast", x, wide)


@rule("dequantize-widen", "dequantizeLinear", limits=True,
      why="outside the target's opSupportLimits()")
def dequantize_widen(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """dequantizeLinear of an integer type the target lacks, on a wider integer type (see
    the module docstring)."""
    x, scale, zero = operation.args
    if not rw.limits or fits(rw, operation) or x.data_type != zero.data_type:
        return None
    narrow = x.data_type
    for wide in QUANT_WIDER.get(narrow, ()):
        if not (rw.supports("dequantizeLinear", "input", wide, x.rank)
                and rw.supports("dequantizeLinear", "zeroPoint", wide, zero.rank)):
            continue
        if x.kind != "constant" and not (rw.supports("cast", "input", narrow)
                                         and rw.supports("cast", "output", wide)):
            continue

        def build(wide: str = wide) -> list[MLOperand]:
            nx, nz = _widened(rw, x, wide), _widened(rw, zero, wide)
            if nx is None or nz is None:
                raise Decline
            return [rw.emit1("dequantizeLinear", nx, scale, nz, **operation.options)]

        got = attempt(rw, operation, "dequantize-widen",
                      f"dequantizeLinear of {narrow} as {wide}", build)
        if got is not None:
            return got
    return None



@rule("fold-constant-cast", "cast",
      why="Chromium 153 (LiteRT) casts float16 constants holding infinities or NaN wrongly; "
          "folded at conversion time")
def fold_constant_cast(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """cast of a constant with a value (not a 4-bit packed one, not to a 4-bit type): the
    constant cast now by the reference runtime's kernel (see the module docstring)."""
    x, data_type = operation.args
    if x.kind != "constant" or x.value is None or data_type in FOUR_BIT_TYPES \
            or x.data_type in FOUR_BIT_TYPES:
        return None
    value = reference_cast(operation, [np.asarray(x.value), data_type], {})[0]
    rw.note("fold-constant-cast", f"cast of a {x.data_type} constant to {data_type} folded")
    return [rw.b.constant(np.array(value, order="C"), data_type)]
