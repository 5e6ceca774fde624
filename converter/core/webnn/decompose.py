"""The spec's "emulation" notes as reusable decompositions into WebNN primitives.

Importers call these when a source op needs something a native WebNN op cannot express, most
often a recurrent activation outside WebNN's relu/sigmoid/tanh (ONNX HardSigmoid, Elu,
Affine, ...): every recurrent function here takes its gate activations as callables
`(builder, operand) -> operand`. Each function emits ordinary builder calls (gemm, matmul,
slice, concat, reshape, add, mul, ...) on the builder it is given and returns what the
native op would return, with the same semantics, shapes and data types.

Argument validation is the native op's: the recurrent decompositions first run the native
builder method on the same arguments (with string activations), which raises the spec's
MLTypeError for any bad argument; its unused result is not reachable from any output, so
`build()` leaves it out of the graph.

Restrictions: recurrent and normalisation decompositions need float32 or float16 operands
(gemm/matmul); `steps` above 8192 are concatenated in chunks of 8192.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, overload

import numpy as np

from converter.core.webnn.dtypes import type_range
from converter.core.webnn.errors import MLTypeError
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


def _resolve(acts: Sequence[ActivationSpec]) -> list[Activation]:
    out = []
    for a in acts:
        if isinstance(a, str):
            out.append(ACTIVATIONS[a])
        elif callable(a):
            out.append(a)
        else:
            raise MLTypeError(f"decompose: activation {a!r} is neither a name nor a callable")
    return out


def _native_names(acts: Sequence[ActivationSpec] | None, default: tuple[str, ...]
                  ) -> list[str] | None:
    """Activations to hand the native op for validation: names stay (so bad names fail as
    they do natively), callables become a default name (keeping the count check)."""
    if acts is None:
        return None
    if isinstance(acts, (str, bytes)) or not isinstance(acts, Sequence):
        return acts  # type: ignore[return-value]  # the native op rejects it
    return [a if isinstance(a, str) else default[min(k, len(default) - 1)]
            for k, a in enumerate(acts)]


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


def _cols(b: MLGraphBuilder, x: MLOperand, start: int, size: int) -> MLOperand:
    """Columns [start, start + size) of a 2-D operand."""
    if start == 0 and size == x.shape[1]:
        return x
    return b.slice(x, [0, start], [x.shape[0], size])


def _rows(b: MLGraphBuilder, x: MLOperand, start: int, size: int) -> MLOperand:
    """Rows [start, start + size) of a 1-D or 2-D operand."""
    if start == 0 and size == x.shape[0]:
        return x
    return b.slice(x, [start, *([0] * (x.rank - 1))], [size, *x.shape[1:]])


@overload
def _direction(b: MLGraphBuilder, x: MLOperand, d: int) -> MLOperand: ...
@overload
def _direction(b: MLGraphBuilder, x: MLOperand | None, d: int) -> MLOperand | None: ...
def _direction(b: MLGraphBuilder, x: MLOperand | None, d: int) -> MLOperand | None:
    """Entry d of the leading (directions) axis, squeezed."""
    if x is None:
        return None
    part = x if x.shape[0] == 1 else b.slice(x, [d, *([0] * (x.rank - 1))],
                                             [1, *x.shape[1:]])
    return b.reshape(part, list(x.shape[1:]))


def _zeros(b: MLGraphBuilder, shape: Sequence[int], data_type: str) -> MLOperand:
    return b.constant(np.zeros(tuple(shape), dtype=data_type))


# -- gru -------------------------------------------------------------------------------------
GRU_OFFSETS = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_OFFSETS = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3},
                "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}
PEEPHOLE_OFFSETS = {"i": 0, "o": 1, "f": 2}


def _gru_step(b: MLGraphBuilder, xw: MLOperand, hidden: MLOperand, r_weight: MLOperand,
              r_bias: MLOperand | None, h: int, layout: str, reset_after: bool,
              acts: list[Activation]) -> MLOperand:
    """One GRU step from the input projection xw = x·Wᵀ + bias [B, 3H]."""
    off = GRU_OFFSETS[layout]
    f, g = acts

    def gate(t: MLOperand, name: str) -> MLOperand:
        return _cols(b, t, off[name] * h, h)

    if reset_after:
        hr = b.gemm(hidden, r_weight, c=r_bias, b_transpose=True)  # [B, 3H]
        z = f(b, b.add(gate(xw, "z"), gate(hr, "z")))
        r = f(b, b.add(gate(xw, "r"), gate(hr, "r")))
        n = g(b, b.add(gate(xw, "n"), b.mul(r, gate(hr, "n"))))
    else:
        # z and r occupy the first 2H rows in both layouts; n is always at 2H.
        zr_bias = None if r_bias is None else _rows(b, r_bias, 0, 2 * h)
        hr = b.gemm(hidden, _rows(b, r_weight, 0, 2 * h), c=zr_bias, b_transpose=True)
        z = f(b, b.add(gate(xw, "z"), gate(hr, "z")))
        r = f(b, b.add(gate(xw, "r"), gate(hr, "r")))
        n_bias = None if r_bias is None else _rows(b, r_bias, 2 * h, h)
        hn = b.gemm(b.mul(r, hidden), _rows(b, r_weight, 2 * h, h), c=n_bias,
                    b_transpose=True)
        n = g(b, b.add(gate(xw, "n"), hn))
    one = scalar(b, 1.0, hidden.data_type)
    return b.add(b.mul(z, hidden), b.mul(b.sub(one, z), n))


def gru_cell(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
             recurrent_weight: MLOperand, hidden_state: MLOperand, hidden_size: int, *,
             bias: MLOperand | None = None, recurrent_bias: MLOperand | None = None,
             reset_after: bool = True, layout: str = "zrn",
             activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn)) -> MLOperand:
    """gruCell from primitives; `activations` = (gate activation, new-gate activation)."""
    b.gru_cell(input, weight, recurrent_weight, hidden_state, hidden_size, bias=bias,
               recurrent_bias=recurrent_bias, reset_after=reset_after, layout=layout,
               activations=_native_names(activations, ("sigmoid", "tanh")))
    xw = b.gemm(input, weight, c=bias, b_transpose=True)
    return _gru_step(b, xw, hidden_state, recurrent_weight, recurrent_bias, hidden_size,
                     layout, reset_after, _resolve(activations))


def _input_projection(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
                      bias: MLOperand | None) -> list[MLOperand]:
    """x·Wᵀ + bias for every step at once, split back into per-step [B, G·H] operands."""
    steps, batch, _ = input.shape
    flat = b.reshape(input, [steps * batch, input.shape[2]])
    proj = b.gemm(flat, weight, c=bias, b_transpose=True)  # [steps·B, G·H]
    if steps == 1:
        return [proj]
    return [b.slice(proj, [t * batch, 0], [batch, proj.shape[1]]) for t in range(steps)]


def _time_order(steps: int, direction: str, d: int) -> range:
    reverse = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if reverse else range(steps)


def gru(b: MLGraphBuilder, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
        steps: int, hidden_size: int, *, bias: MLOperand | None = None,
        recurrent_bias: MLOperand | None = None,
        initial_hidden_state: MLOperand | None = None, reset_after: bool = True,
        return_sequence: bool = False, direction: str = "forward", layout: str = "zrn",
        activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn)) -> list[MLOperand]:
    """gru from primitives: [hidden [D, B, H]] or [hidden, sequence [steps, D, B, H]]."""
    b.gru(input, weight, recurrent_weight, steps, hidden_size, bias=bias,
          recurrent_bias=recurrent_bias, initial_hidden_state=initial_hidden_state,
          reset_after=reset_after, return_sequence=return_sequence, direction=direction,
          layout=layout, activations=_native_names(activations, ("sigmoid", "tanh")))
    acts = _resolve(activations)
    dirs, batch, h, dtype = weight.shape[0], input.shape[1], hidden_size, input.data_type
    finals: list[MLOperand] = []
    sequences: list[MLOperand] = []
    for d in range(dirs):
        xw = _input_projection(b, input, _direction(b, weight, d), _direction(b, bias, d))
        r_weight = _direction(b, recurrent_weight, d)
        r_bias = _direction(b, recurrent_bias, d)
        cur = (_direction(b, initial_hidden_state, d) if initial_hidden_state is not None
               else _zeros(b, (batch, h), dtype))
        per_step: dict[int, MLOperand] = {}
        for t in _time_order(steps, direction, d):
            cur = _gru_step(b, xw[t], cur, r_weight, r_bias, h, layout, reset_after, acts)
            per_step[t] = cur
        finals.append(b.reshape(cur, [1, batch, h]))
        if return_sequence:
            sequences.append(concat(b, [b.reshape(per_step[t], [1, 1, batch, h])
                                        for t in range(steps)], 0))
    out = [concat(b, finals, 0)]
    if return_sequence:
        out.append(concat(b, sequences, 1))
    return out


# -- lstm ------------------------------------------------------------------------------------
def _lstm_step(b: MLGraphBuilder, xw: MLOperand, hidden: MLOperand, cell: MLOperand,
               r_weight: MLOperand, r_bias: MLOperand | None, peephole: MLOperand | None,
               h: int, layout: str, acts: list[Activation]) -> list[MLOperand]:
    """One LSTM step from the input projection xw = x·Wᵀ + bias [B, 4H]."""
    off = LSTM_OFFSETS[layout]
    f_act, g_act, h_act = acts
    pre = b.add(xw, b.gemm(hidden, r_weight, c=r_bias, b_transpose=True))  # [B, 4H]

    def gate(name: str, peep: bool) -> MLOperand:
        value = _cols(b, pre, off[name] * h, h)
        if peep and peephole is not None:
            weights = _rows(b, peephole, PEEPHOLE_OFFSETS[name] * h, h)
            value = b.add(value, b.mul(weights, cell))  # the incoming cell state
        return value

    i = f_act(b, gate("i", True))
    f = f_act(b, gate("f", True))
    g = g_act(b, gate("g", False))
    o = f_act(b, gate("o", True))
    new_cell = b.add(b.mul(f, cell), b.mul(i, g))
    return [b.mul(o, h_act(b, new_cell)), new_cell]


def lstm_cell(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
              recurrent_weight: MLOperand, hidden_state: MLOperand, cell_state: MLOperand,
              hidden_size: int, *, bias: MLOperand | None = None,
              recurrent_bias: MLOperand | None = None,
              peephole_weight: MLOperand | None = None, layout: str = "iofg",
              activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn, tanh_fn)
              ) -> list[MLOperand]:
    """lstmCell from primitives: [hidden, cell]; `activations` = (gate activation,
    cell-candidate activation, activation applied to the cell state for the output)."""
    b.lstm_cell(input, weight, recurrent_weight, hidden_state, cell_state, hidden_size,
                bias=bias, recurrent_bias=recurrent_bias, peephole_weight=peephole_weight,
                layout=layout,
                activations=_native_names(activations, ("sigmoid", "tanh", "tanh")))
    xw = b.gemm(input, weight, c=bias, b_transpose=True)
    return _lstm_step(b, xw, hidden_state, cell_state, recurrent_weight, recurrent_bias,
                      peephole_weight, hidden_size, layout, _resolve(activations))


def lstm(b: MLGraphBuilder, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
         steps: int, hidden_size: int, *, bias: MLOperand | None = None,
         recurrent_bias: MLOperand | None = None, peephole_weight: MLOperand | None = None,
         initial_hidden_state: MLOperand | None = None,
         initial_cell_state: MLOperand | None = None, return_sequence: bool = False,
         direction: str = "forward", layout: str = "iofg",
         activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn, tanh_fn)
         ) -> list[MLOperand]:
    """lstm from primitives: [hidden, cell] (each [D, B, H]) plus the sequence
    [steps, D, B, H] when `return_sequence`."""
    b.lstm(input, weight, recurrent_weight, steps, hidden_size, bias=bias,
           recurrent_bias=recurrent_bias, peephole_weight=peephole_weight,
           initial_hidden_state=initial_hidden_state, initial_cell_state=initial_cell_state,
           return_sequence=return_sequence, direction=direction, layout=layout,
           activations=_native_names(activations, ("sigmoid", "tanh", "tanh")))
    acts = _resolve(activations)
    dirs, batch, h, dtype = weight.shape[0], input.shape[1], hidden_size, input.data_type
    hiddens: list[MLOperand] = []
    cells: list[MLOperand] = []
    sequences: list[MLOperand] = []
    for d in range(dirs):
        xw = _input_projection(b, input, _direction(b, weight, d), _direction(b, bias, d))
        r_weight = _direction(b, recurrent_weight, d)
        r_bias = _direction(b, recurrent_bias, d)
        peep = _direction(b, peephole_weight, d)
        cur_h = (_direction(b, initial_hidden_state, d) if initial_hidden_state is not None
                 else _zeros(b, (batch, h), dtype))
        cur_c = (_direction(b, initial_cell_state, d) if initial_cell_state is not None
                 else _zeros(b, (batch, h), dtype))
        per_step: dict[int, MLOperand] = {}
        for t in _time_order(steps, direction, d):
            cur_h, cur_c = _lstm_step(b, xw[t], cur_h, cur_c, r_weight, r_bias, peep, h,
                                      layout, acts)
            per_step[t] = cur_h
        hiddens.append(b.reshape(cur_h, [1, batch, h]))
        cells.append(b.reshape(cur_c, [1, batch, h]))
        if return_sequence:
            sequences.append(concat(b, [b.reshape(per_step[t], [1, 1, batch, h])
                                        for t in range(steps)], 0))
    out = [concat(b, hiddens, 0), concat(b, cells, 0)]
    if return_sequence:
        out.append(concat(b, sequences, 1))
    return out


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
    "ACTIVATIONS", "Activation", "atan", "blockwise_expand", "concat", "dequantize_linear",
    "elu_fn", "flatten", "gelu", "gru", "gru_cell", "hard_sigmoid_fn", "layer_normalization",
    "leaky_relu_fn", "linear_fn", "lstm", "lstm_cell", "polynomial", "quantize_linear",
    "relu_fn", "reverse_sequence", "reverse_sequence_table", "scalar", "scaled_tanh_fn",
    "sigmoid_fn", "softplus_fn", "softsign_fn", "squeeze", "tanh_fn", "thresholded_relu_fn",
    "top_k", "unsqueeze",
]
