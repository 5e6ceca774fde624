"""ONNX Sinh, Cosh, Asinh, Acosh, Atanh, Atan, Asin, Acos -> WebNN element-wise chains
(WebNN has sin/cos/tan but no hyperbolic or inverse trigonometric ops).

Every formula is chosen to stay accurate in float32 when each WebNN op rounds its result:

- Sinh: |x| < 1: odd Taylor polynomial x·Σ x^(2k)/(2k+1)!, k <= 5 (truncation < 2e-10
  relative); |x| >= 1: sign(x)·(exp(|x|) - exp(-|x|))/2 (no cancellation there).
- Cosh: (exp(x) + exp(-x))/2.
- log1p(u) (helper) = log(w)·u/(w - 1) with w = 1 + u rounded (Kahan's trick; u where
  w = 1, log(w) where u is infinite).
- Asinh: sign(x)·log1p(a + a²/(1 + sqrt(1 + a²))), a = |x|; log(a) + ln 2 for a > 2^26.
- Acosh: log1p(t + sqrt(t·(t + 2))), t = x - 1 (exact near 1); log(x) + ln 2 for x > 2^26.
- Atanh: sign(x)·log1p(2a/(1 - a))/2.
- Atan: argument reduction a = |x| -> t = min(a, 1/a) in [0, 1] (atan(a) = π/2 - atan(1/a)
  for a > 1) -> u = (t·√3 - 1)/(t + √3) for t > tan(π/12) (atan(t) = π/6 + atan(u)), so
  |u| <= tan(π/12) ~ 0.268; then atan(u) = u·Σ_{k=0..7} (-1)^k u^(2k)/(2k+1) (Horner in u²).
  Truncation error <= |u|^16/17 < 5e-11 relative; with float32 rounding of the ~20 ops the
  result is within a few float32 ulps (tests: max relative error < 2e-6 vs onnxruntime).
- Asin: atan(x / sqrt((1 - x)·(1 + x))) (±1 -> ±π/2 through atan(±inf)).
- Acos: 2·atan(sqrt((1 - x)/(1 + x))) (-1 -> π through atan(inf)).
Restrictions: float32 and float16 (float16 is computed in float32 and cast back);
out-of-domain inputs give NaN as in ONNX; Sinh/Cosh overflow to inf for |x| > 88.72 in
float32 (slightly before the true result does, at 89.4); the formulas rely on IEEE
division by zero (inf) and a `where` that does not propagate the unselected branch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check

_LN2 = math.log(2.0)
_BIG = 2.0 ** 26


class _Ops:
    """Small helpers over the builder for one float data type."""

    def __init__(self, ctx: ImportContext, dt: str) -> None:
        self.b = ctx.builder
        self.ctx = ctx
        self.dt = dt

    def c(self, value: float) -> Any:
        return self.ctx.constant(np.asarray(value, dtype=self.dt))

    def poly(self, z: Any, coeffs: list[float]) -> Any:
        """c0 + z·(c1 + z·(c2 + ...)) (Horner)."""
        return dc.polynomial(self.b, z, coeffs)

    def log1p(self, u: Any) -> Any:
        b = self.b
        w = b.add(self.c(1.0), u)
        d = b.sub(w, self.c(1.0))
        log_w = b.log(w)
        exact = b.where(b.is_infinite(u), log_w, b.mul(log_w, b.div(u, d)))
        return b.where(b.equal(d, self.c(0.0)), u, exact)

    def atan(self, x: Any) -> Any:
        """`converter.core.webnn.decompose.atan`."""
        return dc.atan(self.b, x)


def _sinh(o: _Ops, x: Any) -> Any:
    b = o.b
    a = b.abs(x)
    z = b.mul(x, x)
    small = b.mul(x, o.poly(z, [1.0 / math.factorial(2 * k + 1) for k in range(6)]))
    large = b.mul(b.sign(x), b.mul(b.sub(b.exp(a), b.exp(b.neg(a))), o.c(0.5)))
    return b.where(b.lesser(a, o.c(1.0)), small, large)


def _cosh(o: _Ops, x: Any) -> Any:
    b = o.b
    return b.mul(b.add(b.exp(x), b.exp(b.neg(x))), o.c(0.5))


def _asinh(o: _Ops, x: Any) -> Any:
    b = o.b
    a = b.abs(x)
    a2 = b.mul(a, a)
    inner = b.add(a, b.div(a2, b.add(o.c(1.0), b.sqrt(b.add(o.c(1.0), a2)))))
    r = b.where(b.greater(a, o.c(_BIG)), b.add(b.log(a), o.c(_LN2)), o.log1p(inner))
    return b.mul(b.sign(x), r)


def _acosh(o: _Ops, x: Any) -> Any:
    b = o.b
    t = b.sub(x, o.c(1.0))
    inner = b.add(t, b.sqrt(b.mul(t, b.add(t, o.c(2.0)))))
    return b.where(b.greater(x, o.c(_BIG)), b.add(b.log(x), o.c(_LN2)), o.log1p(inner))


def _atanh(o: _Ops, x: Any) -> Any:
    b = o.b
    a = b.abs(x)
    u = b.div(b.mul(a, o.c(2.0)), b.sub(o.c(1.0), a))
    return b.mul(b.mul(b.sign(x), o.c(0.5)), o.log1p(u))


def _atan(o: _Ops, x: Any) -> Any:
    return o.atan(x)


def _asin(o: _Ops, x: Any) -> Any:
    b = o.b
    one = o.c(1.0)
    return o.atan(b.div(x, b.sqrt(b.mul(b.sub(one, x), b.add(one, x)))))


def _acos(o: _Ops, x: Any) -> Any:
    b = o.b
    one = o.c(1.0)
    return b.mul(o.c(2.0), o.atan(b.sqrt(b.div(b.sub(one, x), b.add(one, x)))))


_FORMULAS: dict[str, Callable[[_Ops, Any], Any]] = {
    "Sinh": _sinh, "Cosh": _cosh, "Asinh": _asinh, "Acosh": _acosh, "Atanh": _atanh,
    "Atan": _atan, "Asin": _asin, "Acos": _acos}


@onnx_op(tuple(_FORMULAS), since=7)
def trig(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    dt = x.data_type
    if dt == "float16":
        x = ctx.builder.cast(x, "float32")
    y = _FORMULAS[node.op_type](_Ops(ctx, "float32"), x)
    return [ctx.builder.cast(y, dt) if dt == "float16" else y]
