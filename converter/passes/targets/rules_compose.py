"""Operators a target lacks, composed from operators it has (see `converter.passes.targets.passes`).

Each rule applies only when the operation does not fit the target's `opSupportLimits()`
(operator absent, or a data type / rank outside its limits), and is kept only when every
operation it emits fits (`converter.passes.targets.fitting.attempt`; the pieces go through the
rules again, so a float16 piece may be computed in float32 and a missing piece composed in
turn). The compositions are the spec's emulation notes, exact up to floating-point rounding:

- activations (`compose-activation`): gelu (0.5·x·(1 + erf(x/√2))), hardSigmoid
  (max(min(αx + β, 1), 0)), hardSwish (x·max(0, min(6, x + 3))/6), softplus (max(x, 0) +
  log(1 + exp(-|x|)), the overflow-free form of log(1 + exp(x))), softsign (x/(1 + |x|)),
  elu (max(0, x) + α·(exp(min(0, x)) - 1)), leakyRelu / prelu (max(0, x) + α·min(0, x)),
  linear (αx + β), relu (max(x, 0)), sigmoid (1/(1 + exp(-x))), neg (-1·x; 0 - x for
  integers), reciprocal (1/x), sign (where(x > 0, 1, where(x < 0, -1, x))), isNaN (x != x),
  isInfinite (|x| == inf);
- logical operators (`compose-logical`): logicalNot (a == 0), logicalAnd / Or / Xor on
  (a != 0) and (b != 0) (mul / max / notEqual);
- reductions (`compose-reduce`): reduceL1 (sum |x|), reduceL2 (sqrt of reduceSumSquare),
  reduceLogSum (log of reduceSum), reduceLogSumExp (m + log(sum(exp(x - m))), m the max),
  reduceSumSquare (sum x·x), reduceMean (sum / count);
- normalizations (`compose-normalization`): layerNormalization, instanceNormalization and
  batchNormalization as (x - mean) / sqrt(variance + ε) · scale + bias;
- recurrent networks (`compose-recurrent`): gru, gruCell, lstm, lstmCell unrolled into gemm /
  matmul / add / mul / sigmoid / tanh (`converter.core.webnn.decompose`, as the importers use it);
- others (`compose-misc`): gemm (matmul, transposes, α, β·c), softmax (exp(x - max) / sum),
  expand (reshape and tile), triangular (where with a constant mask).

Restrictions: the compositions of reduceMean, softmax, normalizations, gelu... are for float
types (as the operators are); an operator whose composition does not fit either is left as it
is (the target's check names it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from converter.core.webnn import MLOperand, decompose, decompose_recurrent
from converter.core.webnn.operand import Operation
from converter.passes.targets.fitting import Decline, Via, attempt, fits, py_options
from converter.passes.targets.rewrite import Rewrite, rule

WHY = "the target's opSupportLimits() lack it"

Builder = Callable[[Rewrite, Operation], list[MLOperand]]


def _k(rw: Rewrite, value: float, data_type: str) -> MLOperand:
    return rw.const(np.array(value), data_type)


def _compose(rw: Rewrite, operation: Operation, name: str, table: dict[str, Builder]
             ) -> list[MLOperand] | None:
    fn = table.get(operation.op)
    if fn is None or not rw.limits or fits(rw, operation):
        return None
    return attempt(rw, operation, name, f"{operation.op} composed from other operators",
                   lambda: fn(rw, operation))


# -- activations -----------------------------------------------------------------------------
def _x(operation: Operation) -> tuple[MLOperand, str, dict[str, Any]]:
    x = operation.args[0]
    return x, x.data_type, dict(operation.options)


def _relu_parts(rw: Rewrite, x: MLOperand) -> tuple[MLOperand, MLOperand]:
    zero = _k(rw, 0, x.data_type)
    return rw.emit1("max", x, zero), rw.emit1("min", x, zero)


def _gelu(rw: Rewrite, o: Operation) -> list[MLOperand]:
    return [decompose.gelu(cast(Any, Via(rw)), o.args[0])]


def _hard_sigmoid(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, opt = _x(o)
    y = rw.emit1("add", rw.emit1("mul", x, _k(rw, opt["alpha"], t)), _k(rw, opt["beta"], t))
    return [rw.emit1("max", rw.emit1("min", y, _k(rw, 1, t)), _k(rw, 0, t))]


def _hard_swish(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    y = rw.emit1("max", rw.emit1("min", rw.emit1("add", x, _k(rw, 3, t)), _k(rw, 6, t)),
                 _k(rw, 0, t))
    return [rw.emit1("div", rw.emit1("mul", x, y), _k(rw, 6, t))]


def _softplus(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    pos, _neg = _relu_parts(rw, x)
    e = rw.emit1("exp", rw.emit1("neg", rw.emit1("abs", x)))
    return [rw.emit1("add", pos, rw.emit1("log", rw.emit1("add", e, _k(rw, 1, t))))]


def _softsign(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    return [rw.emit1("div", x, rw.emit1("add", rw.emit1("abs", x), _k(rw, 1, t)))]


def _elu(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, opt = _x(o)
    pos, neg = _relu_parts(rw, x)
    e = rw.emit1("sub", rw.emit1("exp", neg), _k(rw, 1, t))
    return [rw.emit1("add", pos, rw.emit1("mul", e, _k(rw, opt["alpha"], t)))]


def _leaky_relu(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, opt = _x(o)
    pos, neg = _relu_parts(rw, x)
    return [rw.emit1("add", pos, rw.emit1("mul", neg, _k(rw, opt["alpha"], t)))]


def _prelu(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, slope = o.args
    pos, neg = _relu_parts(rw, x)
    return [rw.emit1("add", pos, rw.emit1("mul", neg, slope))]


def _linear(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, opt = _x(o)
    return [rw.emit1("add", rw.emit1("mul", x, _k(rw, opt["alpha"], t)),
                     _k(rw, opt["beta"], t))]


def _relu(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    return [rw.emit1("max", x, _k(rw, 0, t))]


def _sigmoid(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    e = rw.emit1("exp", rw.emit1("neg", x))
    return [rw.emit1("div", _k(rw, 1, t), rw.emit1("add", e, _k(rw, 1, t)))]


def _neg(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    if t.startswith("float"):
        return [rw.emit1("mul", x, _k(rw, -1, t))]
    return [rw.emit1("sub", _k(rw, 0, t), x)]


def _reciprocal(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    return [rw.emit1("div", _k(rw, 1, t), x)]


def _sign(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    zero = _k(rw, 0, t)
    inner = rw.emit1("where", rw.emit1("lesser", x, zero), _k(rw, -1, t), x)
    return [rw.emit1("where", rw.emit1("greater", x, zero), _k(rw, 1, t), inner)]


def _is_nan(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x = o.args[0]
    return [rw.emit1("notEqual", x, x)]


def _is_infinite(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, _ = _x(o)
    return [rw.emit1("equal", rw.emit1("abs", x), _k(rw, math.inf, t))]


ACTIVATIONS: dict[str, Builder] = {
    "gelu": _gelu, "hardSigmoid": _hard_sigmoid, "hardSwish": _hard_swish,
    "softplus": _softplus, "softsign": _softsign, "elu": _elu, "leakyRelu": _leaky_relu,
    "prelu": _prelu, "linear": _linear, "relu": _relu, "sigmoid": _sigmoid, "neg": _neg,
    "reciprocal": _reciprocal, "sign": _sign, "isNaN": _is_nan, "isInfinite": _is_infinite}


@rule("compose-activation", *ACTIVATIONS, limits=True, why=WHY)
def compose_activation(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """An elementwise operator the target lacks, composed (see the module docstring)."""
    return _compose(rw, operation, "compose-activation", ACTIVATIONS)


# -- logical ---------------------------------------------------------------------------------
def _truth(rw: Rewrite, x: MLOperand) -> MLOperand:
    return rw.emit1("notEqual", x, _k(rw, 0, x.data_type))


def _logical(rw: Rewrite, o: Operation) -> list[MLOperand]:
    if o.op == "logicalNot":
        x = o.args[0]
        return [rw.emit1("equal", x, _k(rw, 0, x.data_type))]
    a, b = _truth(rw, o.args[0]), _truth(rw, o.args[1])
    op = {"logicalAnd": "mul", "logicalOr": "max", "logicalXor": "notEqual"}[o.op]
    return [rw.emit1(op, a, b)]


LOGICAL: dict[str, Builder] = {op: _logical for op in
                               ("logicalNot", "logicalAnd", "logicalOr", "logicalXor")}


@rule("compose-logical", *LOGICAL, limits=True, why=WHY)
def compose_logical(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A logical operator the target lacks, from comparisons (see the module docstring)."""
    return _compose(rw, operation, "compose-logical", LOGICAL)


# -- reductions ------------------------------------------------------------------------------
def _reduce(rw: Rewrite, op: str, x: MLOperand, opt: dict[str, Any]) -> MLOperand:
    return rw.emit1(op, x, axes=opt["axes"], keepDimensions=opt["keepDimensions"])


def _reduction(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, t, opt = _x(o)
    if o.op == "reduceL1":
        return [_reduce(rw, "reduceSum", rw.emit1("abs", x), opt)]
    if o.op == "reduceL2":
        return [rw.emit1("sqrt", _reduce(rw, "reduceSumSquare", x, opt))]
    if o.op == "reduceLogSum":
        return [rw.emit1("log", _reduce(rw, "reduceSum", x, opt))]
    if o.op == "reduceSumSquare":
        return [_reduce(rw, "reduceSum", rw.emit1("mul", x, x), opt)]
    if o.op == "reduceMean":
        axes = opt["axes"]
        count = math.prod(x.shape[a] for a in axes) if axes is not None else \
            math.prod(x.shape)
        if not t.startswith("float") or count == 0:
            raise Decline
        return [rw.emit1("div", _reduce(rw, "reduceSum", x, opt), _k(rw, count, t))]
    # reduceLogSumExp: m + log(sum(exp(x - m))), m = max over the axes (kept for x - m)
    if not t.startswith("float"):
        raise Decline
    kept = dict(opt, keepDimensions=True)
    m = _reduce(rw, "reduceMax", x, kept)
    s = _reduce(rw, "reduceSum", rw.emit1("exp", rw.emit1("sub", x, m)), opt)
    out_m = m if opt["keepDimensions"] else rw.emit1("reshape", m, list(s.shape))
    return [rw.emit1("add", rw.emit1("log", s), out_m)]


REDUCTIONS: dict[str, Builder] = {op: _reduction for op in (
    "reduceL1", "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceSumSquare",
    "reduceMean")}


@rule("compose-reduce", *REDUCTIONS, limits=True, why=WHY)
def compose_reduce(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A reduction the target lacks, from reduceSum / reduceMax and elementwise operators
    (see the module docstring)."""
    return _compose(rw, operation, "compose-reduce", REDUCTIONS)


# -- normalizations --------------------------------------------------------------------------
def _normalize(rw: Rewrite, x: MLOperand, mean: MLOperand, variance: MLOperand,
               epsilon: float) -> MLOperand:
    t = x.data_type
    std = rw.emit1("sqrt", rw.emit1("add", variance, _k(rw, epsilon, t)))
    return rw.emit1("div", rw.emit1("sub", x, mean), std)


def _along(rw: Rewrite, p: MLOperand, rank: int, axis: int) -> MLOperand:
    """A 1-D operand reshaped to broadcast along `axis` of a rank-`rank` operand."""
    shape = [1] * rank
    shape[axis] = p.shape[0]
    return rw.emit1("reshape", p, shape)


def _layer_norm(rw: Rewrite, o: Operation) -> list[MLOperand]:
    opt = py_options(o)
    return [decompose.layer_normalization(cast(Any, Via(rw, raw=("layerNormalization",))),
                                          o.args[0], **opt)]


def _moments(rw: Rewrite, x: MLOperand, axes: list[int]) -> tuple[MLOperand, MLOperand]:
    mean = rw.emit1("reduceMean", x, axes=axes, keepDimensions=True)
    centred = rw.emit1("sub", x, mean)
    variance = rw.emit1("reduceMean", rw.emit1("mul", centred, centred), axes=axes,
                        keepDimensions=True)
    return mean, variance


def _affine(rw: Rewrite, y: MLOperand, opt: dict[str, Any], axis: int) -> MLOperand:
    if opt.get("scale") is not None:
        y = rw.emit1("mul", y, _along(rw, opt["scale"], y.rank, axis))
    if opt.get("bias") is not None:
        y = rw.emit1("add", y, _along(rw, opt["bias"], y.rank, axis))
    return y


def _instance_norm(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, _, opt = _x(o)
    nchw = opt["layout"] == "nchw"
    mean, variance = _moments(rw, x, [2, 3] if nchw else [1, 2])
    y = _normalize(rw, x, mean, variance, opt["epsilon"])
    return [_affine(rw, y, opt, 1 if nchw else 3)]


def _batch_norm(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, mean, variance = o.args
    opt = dict(o.options)
    axis = opt["axis"]
    y = _normalize(rw, x, _along(rw, mean, x.rank, axis), _along(rw, variance, x.rank, axis),
                   opt["epsilon"])
    return [_affine(rw, y, opt, axis)]


NORMALIZATIONS: dict[str, Builder] = {"layerNormalization": _layer_norm,
                                      "instanceNormalization": _instance_norm,
                                      "batchNormalization": _batch_norm}


@rule("compose-normalization", *NORMALIZATIONS, limits=True, why=WHY)
def compose_normalization(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A normalization the target lacks, from reductions and elementwise operators."""
    return _compose(rw, operation, "compose-normalization", NORMALIZATIONS)


# -- recurrent -------------------------------------------------------------------------------
def _recurrent(rw: Rewrite, o: Operation) -> list[MLOperand]:
    table: dict[str, Callable[..., Any]] = {
        "gru": decompose_recurrent.gru, "gruCell": decompose_recurrent.gru_cell,
        "lstm": decompose_recurrent.lstm, "lstmCell": decompose_recurrent.lstm_cell}
    fn = table[o.op]
    got = fn(cast(Any, Via(rw, raw=(o.op,))), *o.args, **py_options(o))
    return list(got) if isinstance(got, (list, tuple)) else [got]


RECURRENT: dict[str, Builder] = {op: _recurrent for op in ("gru", "gruCell", "lstm",
                                                           "lstmCell")}


@rule("compose-recurrent", *RECURRENT, limits=True, why=WHY)
def compose_recurrent(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """gru / gruCell / lstm / lstmCell the target lacks, unrolled over the steps."""
    return _compose(rw, operation, "compose-recurrent", RECURRENT)


# -- others ----------------------------------------------------------------------------------
def _gemm(rw: Rewrite, o: Operation) -> list[MLOperand]:
    a, b = o.args
    opt = dict(o.options)
    t = a.data_type
    if opt["aTranspose"]:
        a = rw.emit1("transpose", a, permutation=[1, 0])
    if opt["bTranspose"]:
        b = rw.emit1("transpose", b, permutation=[1, 0])
    y = rw.emit1("matmul", a, b)
    if opt["alpha"] != 1:
        y = rw.emit1("mul", y, _k(rw, opt["alpha"], t))
    c = opt.get("c")
    if c is not None and opt["beta"] != 0:
        if opt["beta"] != 1:
            c = rw.emit1("mul", c, _k(rw, opt["beta"], t))
        y = rw.emit1("add", y, c)
    return [y]


def _softmax(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x = o.args[0]
    axis = o.args[1] if len(o.args) > 1 else o.options.get("axis")
    m = rw.emit1("reduceMax", x, axes=[axis], keepDimensions=True)
    e = rw.emit1("exp", rw.emit1("sub", x, m))
    return [rw.emit1("div", e, rw.emit1("reduceSum", e, axes=[axis], keepDimensions=True))]


def _expand(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, out = o.args[0], o.outputs[0]
    shape = [1] * (out.rank - x.rank) + list(x.shape)
    y = rw.emit1("reshape", x, shape) if shape != list(x.shape) else x
    reps = [n if have == 1 else 1 for have, n in zip(shape, out.shape, strict=True)]
    return [rw.emit1("tile", y, reps) if any(r != 1 for r in reps) else
            rw.emit1("identity", y)]


def _triangular(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x, opt = o.args[0], o.options
    h, w = x.shape[-2:]
    rows, cols = np.arange(h)[:, None], np.arange(w)[None, :]
    k = int(opt["diagonal"])
    keep = (cols - rows >= k) if opt["upper"] else (cols - rows <= k)
    mask = rw.b.constant(keep.astype(np.uint8), "uint8")
    return [rw.emit1("where", mask, x, _k(rw, 0, x.data_type))]


MISC: dict[str, Builder] = {"gemm": _gemm, "softmax": _softmax, "expand": _expand,
                            "triangular": _triangular}


@rule("compose-misc", *MISC, limits=True, why=WHY)
def compose_misc(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """gemm, softmax, expand, triangular the target lacks (see the module docstring)."""
    return _compose(rw, operation, "compose-misc", MISC)
