"""Torch implementations: element-wise binary, comparison, logical, unary, activations, cast,
clamp, where (mirrors the reference kernels/elementwise.py).

Floats are computed in float32 (float16 too, on the CPU) with torch's own kernels, so results
can differ from the float64 reference by a few ULP. Integer arithmetic is exact with
two's-complement wrap-around; integer division truncates toward zero and yields 0 for a zero
divisor; integer `pow` with a negative exponent truncates the real result (1 for base 1,
+-1 for base -1, otherwise 0).

Restriction: casting uint64 values above 2**53 to float32/float16 goes through float64 and can
be off by one ULP in rare double-rounding cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from converter.core.webnn.dtypes import cast_number
from converter.runtimes.torch.registry import (
    INT64_MIN,
    Fn,
    Node,
    impl,
    int64,
    order_key,
    to_float,
    to_storage,
)

# torch.broadcast_tensors is untyped (torch/functional.py)
_broadcast_tensors: Callable[..., tuple[torch.Tensor, ...]] = torch.broadcast_tensors

_FLOAT_BINARY: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "max": torch.maximum, "min": torch.minimum, "pow": torch.pow,
}


def _uint64_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Unsigned 64-bit division of int64 bit patterns (b != 0), as Java's divideUnsigned."""
    flip_b = b ^ INT64_MIN
    big = b < 0  # divisor >= 2**63: quotient is 0 or 1
    q_big = ((a ^ INT64_MIN) >= flip_b).to(torch.int64)
    safe = torch.where(big, 1, b)
    q = torch.div((a >> 1) & 0x7FFFFFFFFFFFFFFF, safe, rounding_mode="floor") << 1
    r = a - q * safe
    q = q + ((r ^ INT64_MIN) >= (safe ^ INT64_MIN)).to(torch.int64)
    return torch.where(big, q_big, q)


def int_div(a: torch.Tensor, b: torch.Tensor, data_type: str) -> torch.Tensor:
    """Integer division truncating toward zero; 0 for a zero divisor; MIN / -1 wraps."""
    a, b = _broadcast_tensors(int64(a), int64(b))
    zero = b == 0
    safe = torch.where(zero, 1, b)
    if data_type == "uint64":
        q = _uint64_div(a, safe)
    else:
        minus_one = safe == -1
        q = torch.div(a, torch.where(minus_one, 1, safe), rounding_mode="trunc")
        q = torch.where(minus_one, -a, q)
    return torch.where(zero, 0, q)


def int_pow(a: torch.Tensor, b: torch.Tensor, data_type: str) -> torch.Tensor:
    """a ** b modulo 2**64 (then wrapped to the output type by the executor)."""
    a, b = _broadcast_tensors(int64(a), int64(b))
    neg = b < 0
    out = torch.pow(a, torch.where(neg, 0, b))
    if data_type == "uint64":
        # Exponent >= 2**63: even bases give 0, odd bases cycle with period 2**62.
        odd = torch.pow(a, b & (2**62 - 1))
        return torch.where(neg, torch.where(a & 1 == 1, odd, 0), out)
    inv = torch.where(a == 1, 1, torch.where(a == -1, torch.where(b % 2 == 0, 1, -1), 0))
    return torch.where(neg, inv, out)


@impl("add", "sub", "mul", "div", "max", "min", "pow")
def binary(node: Node) -> Fn:
    name, dt = node.op.op, node.in_type
    if dt in ("float32", "float16"):
        fn = _FLOAT_BINARY[name]
        fl = node.fl
        return lambda a, b: [fn(fl(a), fl(b))]
    if name in ("add", "sub", "mul"):
        fn = _FLOAT_BINARY[name]
        return lambda a, b: [fn(a, b)]
    if name in ("max", "min"):
        fn = _FLOAT_BINARY[name]
        if dt == "uint64":
            return lambda a, b: [fn(a ^ INT64_MIN, b ^ INT64_MIN) ^ INT64_MIN]
        return lambda a, b: [fn(a, b)]
    if name == "div":
        return lambda a, b: [int_div(a, b, dt)]
    return lambda a, b: [int_pow(a, b, dt)]


_COMPARE: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "equal": torch.eq, "notEqual": torch.ne, "greater": torch.gt, "greaterOrEqual": torch.ge,
    "lesser": torch.lt, "lesserOrEqual": torch.le,
}


@impl(*_COMPARE)
def compare(node: Node) -> Fn:
    fn, dt = _COMPARE[node.op.op], node.in_type
    if dt == "uint64" and node.op.op not in ("equal", "notEqual"):
        return lambda a, b: [fn(order_key(a, dt), order_key(b, dt))]
    fl = node.fl
    return lambda a, b: [fn(fl(a), fl(b))]


_LOGICAL: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "logicalAnd": torch.logical_and, "logicalOr": torch.logical_or,
    "logicalXor": torch.logical_xor,
}


@impl(*_LOGICAL)
def logical(node: Node) -> Fn:
    fn = _LOGICAL[node.op.op]
    return lambda a, b: [fn(a, b)]


@impl("logicalNot")
def logical_not(node: Node) -> Fn:
    return lambda a: [a == 0]


@impl("isNaN")
def is_nan(node: Node) -> Fn:
    return lambda a: [torch.isnan(a)]


@impl("isInfinite")
def is_infinite(node: Node) -> Fn:
    return lambda a: [torch.isinf(a)]


def _hard_swish(x: torch.Tensor) -> torch.Tensor:
    return x * (torch.clamp(x + 3.0, 0.0, 6.0) / 6.0)  # no overflow for huge x


def _softplus(x: torch.Tensor) -> torch.Tensor:
    return torch.logaddexp(x, torch.zeros((), dtype=x.dtype, device=x.device))


def _gelu(x: torch.Tensor) -> torch.Tensor:
    """The spec formula x * 0.5 * (1 + erf(x / sqrt(2))), with 1 + erf(z) written erfc(-z)
    (no cancellation for negative x, where 1 + erf in float32 lost the tiny results). torch's
    own float32 CPU kernel (vectorised on some processors) returns NaN for +inf and inf for
    3.4e38. float16 is computed in float32 and rounded once (float16 steps reached 3 ULP)."""
    if x.dtype == torch.float16:
        return _gelu(x.float()).to(torch.float16)
    return x * 0.5 * torch.erfc(x * -0.7071067811865476)


def _sign(x: torch.Tensor) -> torch.Tensor:
    if x.dtype.is_floating_point:
        return torch.where(torch.isnan(x), 0.0, torch.sign(x))
    return torch.sign(x)


_UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "abs": torch.abs, "ceil": torch.ceil, "cos": torch.cos, "erf": torch.erf,
    "exp": torch.exp, "floor": torch.floor, "log": torch.log, "neg": torch.neg,
    "reciprocal": torch.reciprocal, "roundEven": torch.round, "sin": torch.sin,
    "sign": _sign, "sqrt": torch.sqrt, "tan": torch.tan,
    "gelu": _gelu, "hardSwish": _hard_swish,
    "relu": lambda x: torch.clamp_min(x, 0), "sigmoid": torch.sigmoid,
    "softplus": _softplus, "softsign": lambda x: x / (1.0 + torch.abs(x)), "tanh": torch.tanh,
}


@impl(*_UNARY)
def unary(node: Node) -> Fn:
    fn, fl = _UNARY[node.op.op], node.fl
    return lambda x: [fn(fl(x))]


@impl("identity", moves=True)
def identity(node: Node) -> Fn:
    return lambda x: [x]


def _param(node: Node, name: str) -> float:
    """A double option cast to the operand's data type, as the spec requires."""
    return float(cast_number(node.options[name], node.out_type))


@impl("elu", "hardSigmoid", "leakyRelu", "linear")
def parametric(node: Node) -> Fn:
    alpha, fl, name = _param(node, "alpha"), node.fl, node.op.op
    if name == "elu":
        return lambda x: [torch.clamp_min(fl(x), 0.0)
                          + alpha * torch.expm1(torch.clamp_max(fl(x), 0.0))]
    if name == "leakyRelu":
        return lambda x: [torch.clamp_min(fl(x), 0.0) + alpha * torch.clamp_max(fl(x), 0.0)]
    beta = _param(node, "beta")
    if name == "linear":
        return lambda x: [fl(x) * alpha + beta]
    return lambda x: [torch.clamp(fl(x) * alpha + beta, 0.0, 1.0)]


@impl("prelu")
def prelu(node: Node) -> Fn:
    if node.in_type in ("float32", "float16"):
        fl = node.fl
        return lambda x, s: [torch.clamp_min(fl(x), 0) + fl(s) * torch.clamp_max(fl(x), 0)]
    return lambda x, s: [torch.clamp_min(int64(x), 0) + int64(s) * torch.clamp_max(int64(x), 0)]


@impl("clamp")
def clamp(node: Node) -> Fn:
    """A NaN bound clamps nothing (WPT clamp "minValue as NaN" / "maxValue as NaN")."""
    lo, hi = (None if v is None or math.isnan(float(v)) else v
              for v in (node.options.get("minValue"), node.options.get("maxValue")))
    dt = node.in_type
    if dt in ("float32", "float16"):
        fl = node.fl
        lo_f = None if lo is None else float(lo)
        hi_f = None if hi is None else float(hi)
        if lo_f is None and hi_f is None:
            return lambda x: [x]
        return lambda x: [torch.clamp(fl(x), lo_f, hi_f)]
    if lo is None and hi is None:
        return lambda x: [x]
    if dt == "uint64":  # clamp in signed order: subtract 2**63 from the unsigned bounds
        lo_k = None if lo is None else int(lo) - 2**63
        hi_k = None if hi is None else int(hi) - 2**63
        return lambda x: [torch.clamp(x ^ INT64_MIN, lo_k, hi_k) ^ INT64_MIN]
    lo_i = None if lo is None else int(lo)
    hi_i = None if hi is None else int(hi)
    return lambda x: [torch.clamp(x, lo_i, hi_i)]


@impl("where", moves=True)
def where(node: Node) -> Fn:
    return lambda c, t, f: [torch.where(c != 0, t, f)]


_LARGEST_BELOW_2_63 = 9223372036854774784.0  # the largest double < 2**63


def _float_to_int(x: torch.Tensor, target: str) -> torch.Tensor:
    """Truncate toward zero, NaN -> 0, saturate to the target range (in float64)."""
    t = torch.trunc(torch.nan_to_num(x.double(), nan=0.0))
    if target == "int64":
        out = torch.clamp(t, -(2.0**63), _LARGEST_BELOW_2_63).to(torch.int64)
        return torch.where(t >= 2.0**63, 2**63 - 1, out)
    if target == "uint64":
        top = t >= 2.0**63
        low = torch.clamp(torch.where(top, t - 2.0**63, t), 0.0, _LARGEST_BELOW_2_63)
        out = low.to(torch.int64)
        out = torch.where(top, out ^ INT64_MIN, out)
        return torch.where(t >= 2.0**64, -1, out)
    info = np.iinfo(np.dtype(target))
    return to_storage(torch.clamp(t, float(info.min), float(info.max)).to(torch.int64), target)


@impl("cast", moves=True)
def cast(node: Node) -> Fn:
    """float->int truncates toward zero (NaN -> 0, out of range saturates); int->int keeps
    the low bits; anything->float rounds to nearest."""
    src, target = node.in_type, str(node.op.args[1])
    floats = ("float32", "float16")
    if src in floats and target in floats:
        return lambda x: [to_storage(x, target)]
    if src in floats:
        return lambda x: [_float_to_int(x, target)]
    if target in floats:
        dtype = torch.float32 if target == "float32" else torch.float16
        return lambda x: [to_float(x, src, dtype)]
    return lambda x: [to_storage(x, target)]
