"""The spec's "emulation" notes as reusable decompositions into WebNN primitives: activations
as callables, shape helpers, layer normalization, gelu, blockwise (de)quantization, top-k,
reverse-sequence and atan (the recurrent ops: `decompose_recurrent`).

Importers call these when a source op needs something a native WebNN op cannot express, most
often a recurrent activation outside WebNN's relu/sigmoid/tanh (ONNX HardSigmoid, Elu,
Affine, ...): every recurrent function takes its gate activations as callables
`(builder, operand) -> operand` (`Activation`, defined here). Each function emits ordinary builder calls (gemm, matmul,
slice, concat, reshape, add, mul, ...) on the builder it is given and returns what the
native op would return, with the same semantics, shapes and data types.

Restrictions: normalisation decompositions need float32 or float16 operands; `concat` joins
more than 8192 operands in chunks of 8192.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from converter.core.webnn.dtypes import type_range
from converter.core.webnn.operand import MLOperand

if TYPE_CHECKING:
    from converter.core.webnn.builder import MLGraphBuilder

Activation = Callable[["MLGraphBuilder", MLOperand], MLOperand]
ActivationSpec = str | Activation

MAX_CONCAT = 8192


# -- constants and activations ---------------------------------------------------------------
def scalar(b: MLGraphBuilder, value: float, data_type: str) -> MLOperand:
    """A scalar constant of `data_type` (the value is cast with the spec's rules)."""
    return b.constant(float(value), data_type)


def sigmoid_fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    return b.sigmoid(x)


def tanh_fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    return b.tanh(x)


def relu_fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    return b.relu(x)


def softsign_fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    return b.softsign(x)


def softplus_fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    return b.softplus(x)


def hard_sigmoid_fn(alpha: float = 0.2, beta: float = 0.5) -> Activation:
    """max(0, min(1, alpha * x + beta))."""
    return lambda b, x: b.hard_sigmoid(x, alpha=alpha, beta=beta)


def leaky_relu_fn(alpha: float = 0.01) -> Activation:
    return lambda b, x: b.leaky_relu(x, alpha=alpha)


def elu_fn(alpha: float = 1.0) -> Activation:
    return lambda b, x: b.elu(x, alpha=alpha)


def linear_fn(alpha: float = 1.0, beta: float = 0.0) -> Activation:
    """alpha * x + beta (ONNX "Affine")."""
    return lambda b, x: b.linear(x, alpha=alpha, beta=beta)


def scaled_tanh_fn(alpha: float = 1.0, beta: float = 1.0) -> Activation:
    """alpha * tanh(beta * x) (ONNX "ScaledTanh")."""
    def fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
        inner = b.tanh(b.mul(x, scalar(b, beta, x.data_type)))
        return b.mul(inner, scalar(b, alpha, x.data_type))
    return fn


def thresholded_relu_fn(alpha: float = 1.0) -> Activation:
    """x where x > alpha, else 0 (ONNX "ThresholdedRelu")."""
    def fn(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
        keep = b.greater(x, scalar(b, alpha, x.data_type))
        return b.where(keep, x, scalar(b, 0.0, x.data_type))
    return fn


ACTIVATIONS: dict[str, Activation] = {"sigmoid": sigmoid_fn, "tanh": tanh_fn, "relu": relu_fn}


# -- shape helpers ---------------------------------------------------------------------------
def squeeze(b: MLGraphBuilder, x: MLOperand, axes: Sequence[int] | None = None) -> MLOperand:
    """Remove the size-1 dimensions listed in `axes` (all size-1 dimensions when None)."""
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    drop = {a % max(x.rank, 1) for a in axes}
    for a in drop:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: dimension {a} of shape {list(x.shape)} is not 1")
    return b.reshape(x, [d for i, d in enumerate(x.shape) if i not in drop])


def unsqueeze(b: MLGraphBuilder, x: MLOperand, axes: Sequence[int]) -> MLOperand:
    """Insert size-1 dimensions at `axes` (positions in the output, negatives allowed)."""
    rank = x.rank + len(axes)
    where = {a % rank for a in axes}
    if len(where) != len(axes):
        raise ValueError(f"unsqueeze: duplicate axes {list(axes)}")
    dims = iter(x.shape)
    return b.reshape(x, [1 if i in where else next(dims) for i in range(rank)])


def flatten(b: MLGraphBuilder, x: MLOperand, axis: int = 1) -> MLOperand:
    """Reshape to [prod(shape[:axis]), prod(shape[axis:])] (axis in 0..rank)."""
    if not 0 <= axis <= x.rank:
        raise ValueError(f"flatten: axis {axis} outside 0..{x.rank}")
    return b.reshape(x, [math.prod(x.shape[:axis]), math.prod(x.shape[axis:])])


def concat(b: MLGraphBuilder, items: Sequence[MLOperand], axis: int) -> MLOperand:
    """concat that accepts one item (returned as is) or more than 8192 (chunked)."""
    items = list(items)
    while len(items) > 1:
        items = [b.concat(items[i:i + MAX_CONCAT], axis) if len(items[i:i + MAX_CONCAT]) > 1
                 else items[i] for i in range(0, len(items), MAX_CONCAT)]
    return items[0]


# -- recurrent gate layouts (decompose_recurrent) --------------------------------------------
GRU_OFFSETS = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_OFFSETS = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3},
                "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}
PEEPHOLE_OFFSETS = {"i": 0, "o": 1, "f": 2}


# -- normalisation and activations ---------------------------------------------------------
def layer_normalization(b: MLGraphBuilder, input: MLOperand, *, scale: MLOperand | None = None,
                        bias: MLOperand | None = None, axes: Sequence[int] | None = None,
                        epsilon: float = 1e-5) -> MLOperand:
    """layerNormalization from primitives (mean and population variance over `axes`,
    default 1..rank-1; scale/bias shaped like the input dimensions in `axes` order)."""
    b.layer_normalization(input, scale=scale, bias=bias, axes=axes, epsilon=epsilon)
    axes = list(range(1, input.rank)) if axes is None else list(axes)
    dtype = input.data_type
    mean = b.reduce_mean(input, axes=axes, keep_dimensions=True)
    centred = b.sub(input, mean)
    variance = b.reduce_mean(b.mul(centred, centred), axes=axes, keep_dimensions=True)
    out = b.div(centred, b.sqrt(b.add(variance, scalar(b, epsilon, dtype))))

    def broadcastable(p: MLOperand) -> MLOperand:
        # p's dimensions follow `axes` order: sort them, then reshape with 1s elsewhere.
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        if order != list(range(len(axes))):
            p = b.transpose(p, permutation=order)
        shape = [input.shape[a] if a in axes else 1 for a in range(input.rank)]
        return b.reshape(p, shape) if list(p.shape) != shape else p

    if scale is not None:
        out = b.mul(out, broadcastable(scale))
    if bias is not None:
        out = b.add(out, broadcastable(bias))
    return out


def gelu(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """0.5 · x · (1 + erf(x / √2))."""
    dtype = x.data_type
    inner = b.erf(b.mul(x, scalar(b, 1.0 / math.sqrt(2.0), dtype)))
    return b.mul(b.mul(x, scalar(b, 0.5, dtype)), b.add(inner, scalar(b, 1.0, dtype)))


# -- quantization ----------------------------------------------------------------------------
def blockwise_expand(b: MLGraphBuilder, x: MLOperand, shape: Sequence[int]) -> MLOperand:
    """Repeat each element of x over a contiguous block so the result has `shape` (each
    dimension of `shape` a multiple of x's): per axis, reshape to [before, n, 1, after],
    expand the inserted 1 to the block size, and reshape back."""
    out = x
    for axis, want in enumerate(shape):
        have = out.shape[axis]
        if have == want:
            continue
        before, after = math.prod(out.shape[:axis]), math.prod(out.shape[axis + 1:])
        grid = b.reshape(out, [before, have, 1, after])
        grid = b.expand(grid, [before, have, want // have, after])
        new_shape = list(out.shape)
        new_shape[axis] = want
        out = b.reshape(grid, new_shape)
    return out


def dequantize_linear(b: MLGraphBuilder, input: MLOperand, scale: MLOperand,
                      zero_point: MLOperand) -> MLOperand:
    """(input − zeroPoint) · scale from cast/expand/sub/mul."""
    b.dequantize_linear(input, scale, zero_point)
    dtype = scale.data_type
    x = b.cast(input, dtype)
    zp = blockwise_expand(b, b.cast(zero_point, dtype), input.shape)
    return b.mul(b.sub(x, zp), blockwise_expand(b, scale, input.shape))


def quantize_linear(b: MLGraphBuilder, input: MLOperand, scale: MLOperand,
                    zero_point: MLOperand) -> MLOperand:
    """saturate(roundEven(input / scale) + zeroPoint) from div/roundEven/add/clamp/cast,
    clamping to the zero point type's range (not the spec sample's 0..255). For 32-bit zero
    points the bounds are not exact in float16/float32; the final cast saturates."""
    b.quantize_linear(input, scale, zero_point)
    dtype = scale.data_type
    zp = blockwise_expand(b, b.cast(zero_point, dtype), input.shape)
    q = b.round_even(b.div(input, blockwise_expand(b, scale, input.shape)))
    lo, hi = type_range(zero_point.data_type)
    return b.cast(b.clamp(b.add(q, zp), min_value=lo, max_value=hi), zero_point.data_type)


# -- sorting, sequences, trigonometry --------------------------------------------------------
def top_k(b: MLGraphBuilder, x: MLOperand, k: int, axis: int = -1, largest: bool = True
          ) -> tuple[MLOperand, MLOperand]:
    """(values, int32 indices) of the `k` largest (or smallest) elements along `axis`, sorted
    best first; equal values keep their index order (lower index first), as ONNX TopK and
    TFLite TOPK_V2 require.

    Rank by comparison, with the axis moved last ([..., n]): rank_i = #{j: x_j beats x_i} +
    #{j < i: x_j == x_i} (pairwise greater/lesser + equal on [..., n, n], reduceSum); the
    index of the r-th element is reduceSum((rank == r) · iota) (exact integer arithmetic,
    r < k), and the values are gatherElements(x, indices).
    Restrictions: 1 <= k <= n (the caller checks); the pairwise tensor has n² elements per
    row (memory grows quadratically with the axis length); NaN ordering is unspecified.
    """
    rank = len(x.shape)
    axis = axis + rank if axis < 0 else axis
    n = x.shape[axis]
    last = rank - 1
    perm = [i for i in range(rank) if i != axis] + [axis]
    xt = x if axis == last else b.transpose(x, permutation=perm)
    lead = list(xt.shape[:-1])
    col = b.reshape(xt, [*lead, n, 1])  # x_i
    row = b.reshape(xt, [*lead, 1, n])  # x_j
    beats = (b.greater if largest else b.lesser)(row, col)
    earlier = np.tril(np.ones((n, n), np.uint8), -1)  # [i, j] = j < i
    tie = b.logical_and(b.equal(row, col), b.constant(earlier))
    wins = b.add(b.cast(beats, "int32"), b.cast(tie, "int32"))
    ranks = b.reshape(b.reduce_sum(wins, axes=[len(lead) + 1]), [*lead, n, 1])
    slots = b.equal(ranks, b.constant(np.arange(k, dtype=np.int32).reshape(1, k)))
    iota = b.constant(np.arange(n, dtype=np.int32).reshape(n, 1))
    idx = b.reduce_sum(b.mul(b.cast(slots, "int32"), iota), axes=[len(lead)])  # [..., k]
    values = b.gather_elements(xt, idx, axis=len(lead))
    if axis != last:
        inv = [int(i) for i in np.argsort(perm)]
        values = b.transpose(values, permutation=inv)
        idx = b.transpose(idx, permutation=inv)
    return values, idx


def reverse_sequence_table(shape: Sequence[int], lengths: np.ndarray, time_axis: int,
                           batch_axis: int) -> np.ndarray:
    """int32 gatherElements indices (of `shape`) along `time_axis` that reverse the first
    lengths[i] steps of batch entry i (lengths clamped to [0, T]); the rest stay in place."""
    steps = int(shape[time_axis])
    lens = np.clip(np.asarray(lengths).reshape(-1).astype(np.int64), 0, steps)
    t = np.arange(steps)[None, :]
    table = np.where(t < lens[:, None], lens[:, None] - 1 - t, t)  # [batch, time]
    if time_axis < batch_axis:
        table = table.T
    view = [1] * len(shape)
    view[batch_axis], view[time_axis] = int(shape[batch_axis]), steps
    return np.ascontiguousarray(np.broadcast_to(table.reshape(view), tuple(shape))
                                .astype(np.int32))


def reverse_sequence(b: MLGraphBuilder, x: MLOperand, lengths: np.ndarray, time_axis: int,
                     batch_axis: int) -> MLOperand:
    """ONNX ReverseSequence / TFLite REVERSE_SEQUENCE with constant lengths: gatherElements
    with `reverse_sequence_table` along `time_axis`."""
    table = reverse_sequence_table(x.shape, lengths, time_axis, batch_axis)
    return b.gather_elements(x, b.constant(table), axis=time_axis)


_TAN_PI_12 = 2.0 - math.sqrt(3.0)


def polynomial(b: MLGraphBuilder, z: MLOperand, coeffs: Sequence[float]) -> MLOperand:
    """c0 + z·(c1 + z·(c2 + ...)) (Horner) in z's data type."""
    dt = z.data_type
    acc = scalar(b, coeffs[-1], dt)
    for coef in reversed(coeffs[:-1]):
        acc = b.add(b.mul(acc, z), scalar(b, coef, dt))
    return acc


def atan(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """atan(x) for float x, accurate to a few float32 ulps.

    Argument reduction a = |x| -> t = min(a, 1/a) in [0, 1] (atan(a) = π/2 - atan(1/a) for
    a > 1) -> u = (t·√3 - 1)/(t + √3) for t > tan(π/12) (atan(t) = π/6 + atan(u)), so
    |u| <= tan(π/12) ~ 0.268; then atan(u) = u·Σ_{k=0..7} (-1)^k u^(2k)/(2k+1) (Horner in u²),
    truncation error <= |u|^16/17 < 5e-11 relative. ±inf gives ±π/2 (1/inf = 0), NaN stays
    NaN. Relies on IEEE division by zero and a `where` that ignores the unselected branch.
    """
    dt = x.data_type
    a = b.abs(x)
    inv = b.greater(a, scalar(b, 1.0, dt))
    t = b.min(a, b.reciprocal(a))  # 1/0 = inf: min(0, inf) = 0
    big = b.greater(t, scalar(b, _TAN_PI_12, dt))
    s3 = scalar(b, math.sqrt(3.0), dt)
    u = b.where(big, b.div(b.sub(b.mul(t, s3), scalar(b, 1.0, dt)), b.add(t, s3)), t)
    coeffs = [(-1.0) ** k / (2 * k + 1) for k in range(8)]
    p = b.mul(u, polynomial(b, b.mul(u, u), coeffs))
    r = b.where(big, b.add(p, scalar(b, math.pi / 6, dt)), p)
    r = b.where(inv, b.sub(scalar(b, math.pi / 2, dt), r), r)
    return b.mul(b.sign(x), r)


__all__ = [
    "ACTIVATIONS", "GRU_OFFSETS", "LSTM_OFFSETS", "PEEPHOLE_OFFSETS", "Activation",
    "ActivationSpec", "atan", "blockwise_expand", "concat", "dequantize_linear", "elu_fn",
    "flatten", "gelu", "hard_sigmoid_fn", "layer_normalization", "leaky_relu_fn", "linear_fn",
    "polynomial", "quantize_linear", "relu_fn", "reverse_sequence", "reverse_sequence_table",
    "scalar", "scaled_tanh_fn", "sigmoid_fn", "softplus_fn", "softsign_fn", "squeeze",
    "tanh_fn", "thresholded_relu_fn", "top_k", "unsqueeze",
]
