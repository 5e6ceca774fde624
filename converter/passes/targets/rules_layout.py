"""The preferred layout (see `converter.passes.targets.passes`): on a target whose `opSupportLimits()`
says `preferredInputLayout` "nhwc" (Chromium's LiteRT backend), the layout-sensitive
operations of a channels-first graph (what ONNX converts to) run channels-last, and the
transposes this needs cancel between consecutive such operations, so a convolutional chain
stays NHWC from its first convolution to its pooling / flatten. Every rewrite is exact.

Rules (all limits-driven, inactive unless the limits prefer "nhwc"):

- layout-nhwc: conv2d, convTranspose2d, averagePool2d, maxPool2d, l2Pool2d, resample2d
  (axes [2, 3]), instanceNormalization and batchNormalization (axis 1 of a rank-4 input) that
  run in nchw: the input transposed to NHWC, the operation in nhwc, the result transposed back
  to NCHW. Filters take the layouts LiteRT's kernels use, so Chromium need not transpose them:
  conv2d "ohwi" (TFLite CONV_2D's [O, H, W, I]), a depthwise conv2d (groups == input channels
  == output channels) "ihwo" (DEPTHWISE_CONV_2D's [1, H, W, O], the layout the spec recommends
  for depthwise), convTranspose2d "ohwi" (TRANSPOSE_CONV's [O, H, W, I]). A constant filter is
  transposed now (a new constant; the original stays for other users); a computed one by a
  transpose operation.
- layout-transpose: a transpose of a transpose is one transpose of the composed permutation,
  nothing when that is the identity; a transpose that only moves size-1 axes is a reshape.
- layout-reshape: a reshape of a reshape is one reshape, nothing when the shape comes back.
- layout-push: an NHWC->NCHW transpose (permutation [0, 3, 1, 2]) moves below the
  elementwise operation (unary, binary and where with broadcasting, prelu), concat, pad,
  softmax or reduction that reads it, with axes, paddings and constants remapped (constants
  transposed now; operands whose only non-1 axis is the same in both layouts reshaped), so the
  next layout-converted operation cancels it.

Only the graph's inputs and outputs keep their layout: the graph's interface is unchanged.

Restrictions: an operand of a pushed binary operation that is neither such a transpose, a
constant nor cheaply reshaped keeps the transpose above the operation; a transpose with other
consumers that stay NCHW stays (pushing may then add one transpose on the other branch);
split, slice, gather and reshapes of NHWC data other than the size-1 cases are not pushed
through; the operations are converted only when the target has the operator and transpose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.core.webnn.operators import FAMILIES
from converter.passes.targets.rewrite import Rewrite, rule

UNARY, BINARY, REDUCE = FAMILIES["unary"], FAMILIES["binary"], FAMILIES["reduce"]

TO_NCHW = (0, 3, 1, 2)
"""transpose(x_nhwc, TO_NCHW) is x in NCHW; axis a of NCHW data is axis TO_NCHW[a] of NHWC."""
TO_NHWC = (0, 2, 3, 1)
SPATIAL = ("conv2d", "convTranspose2d", "averagePool2d", "maxPool2d", "l2Pool2d", "resample2d",
           "instanceNormalization", "batchNormalization")
PUSHED = (*UNARY, *BINARY, "prelu", "concat", "pad", "softmax", *REDUCE)
WHY = "the target's opSupportLimits() prefers the nhwc input layout"
_FILTERS: WeakKeyDictionary[Rewrite, dict[tuple[int, str], MLOperand]] = WeakKeyDictionary()
"""Per lowering: constants transposed now, by (id of the source constant, permutation)."""
_TRANSPOSED: WeakKeyDictionary[Rewrite, dict[tuple[int, tuple[int, ...]], MLOperand]] = \
    WeakKeyDictionary()
"""Per lowering: transposes emitted, by (id of the operand, permutation)."""


def prefers_nhwc(rw: Rewrite) -> bool:
    """Whether the target's limits name "nhwc" as the preferred input layout."""
    return bool(rw.limits) and rw.limits.get("preferredInputLayout") == "nhwc"


def transposed_from(x: MLOperand, perm: Sequence[int]) -> MLOperand | None:
    """The input of `x` when `x` is transpose(input, `perm`), else None."""
    op = x.operator
    if op is None or op.op != "transpose" or x.kind == "constant":
        return None
    if tuple(op.options.get("permutation") or ()) != tuple(perm):
        return None
    src = op.args[0]
    return src if isinstance(src, MLOperand) else None


def _moves_only_ones(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """Whether transposing `shape` by `perm` keeps the axes longer than 1 in their order."""
    kept = [a for a in perm if shape[a] != 1]
    return kept == sorted(kept)


def _transpose(rw: Rewrite, x: MLOperand, perm: Sequence[int]) -> MLOperand:
    """transpose(x, perm), emitted once per operand and permutation (an NCHW operand read by
    several converted operations is transposed once)."""
    cache = _TRANSPOSED.setdefault(rw, {})
    key = (id(x), tuple(perm))
    got = cache.get(key)
    if got is None:
        got = cache[key] = rw.emit1("transpose", x, permutation=list(perm))
    return got


def _const_transposed(rw: Rewrite, c: MLOperand, perm: Sequence[int]) -> MLOperand:
    """A new constant: constant `c`'s values transposed by `perm` (cached per source)."""
    cache = _FILTERS.setdefault(rw, {})
    key = (id(c), ",".join(map(str, perm)))
    got = cache.get(key)
    if got is None:
        assert c.value is not None
        got = rw.b.constant(np.ascontiguousarray(np.transpose(c.value, perm)), c.data_type)
        cache[key] = got
    return got


def _is_const(x: Any) -> bool:
    return isinstance(x, MLOperand) and x.kind == "constant" and x.value is not None


def _relayout(rw: Rewrite, x: MLOperand, perm: Sequence[int]) -> MLOperand:
    """`x` transposed by `perm`: at conversion time for a constant, else an operation."""
    return _const_transposed(rw, x, perm) if _is_const(x) else _transpose(rw, x, perm)


# -- layout-nhwc ---------------------------------------------------------------------------

CONV_FILTER_PERM = {"oihw": {"ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)},
                    "hwio": {"ohwi": (3, 0, 1, 2), "ihwo": (2, 0, 1, 3)},
                    "ohwi": {"ohwi": (0, 1, 2, 3), "ihwo": (3, 1, 2, 0)},
                    "ihwo": {"ohwi": (3, 1, 2, 0), "ihwo": (0, 1, 2, 3)}}
"""conv2d filter layout -> {wanted layout: permutation of the filter}."""
CT_FILTER_PERM = {"iohw": (1, 2, 3, 0), "hwoi": (2, 0, 1, 3), "ohwi": (0, 1, 2, 3)}
"""convTranspose2d filter layout -> permutation to "ohwi"."""


def _filter(rw: Rewrite, w: MLOperand, perm: Sequence[int]) -> MLOperand:
    return w if tuple(perm) == (0, 1, 2, 3) else _relayout(rw, w, perm)


def _nhwc_options(rw: Rewrite, o: Operation) -> tuple[list[Any], dict[str, Any]] | None:
    """The arguments (input not yet transposed) and options of `o` in nhwc; None when `o`
    does not run in nchw."""
    opt = dict(o.options)
    args = list(o.args)
    if o.op == "conv2d":
        if opt["inputLayout"] != "nchw":
            return None
        x, w = o.args[0], o.args[1]
        groups = int(opt["groups"])
        c_out = o.outputs[0].shape[1]
        depthwise = groups > 1 and groups == x.shape[1] == c_out
        wanted = "ihwo" if depthwise else "ohwi"
        args[1] = _filter(rw, w, CONV_FILTER_PERM[opt["filterLayout"]][wanted])
        opt.update(inputLayout="nhwc", filterLayout=wanted)
    elif o.op == "convTranspose2d":
        if opt["inputLayout"] != "nchw":
            return None
        args[1] = _filter(rw, o.args[1], CT_FILTER_PERM[opt["filterLayout"]])
        opt.update(inputLayout="nhwc", filterLayout="ohwi")
    elif o.op in ("averagePool2d", "maxPool2d", "l2Pool2d", "instanceNormalization"):
        if opt["layout"] != "nchw":
            return None
        opt["layout"] = "nhwc"
    elif o.op == "resample2d":
        axes = list(opt["axes"])
        if sorted(axes) != [2, 3]:
            return None
        opt["axes"] = [TO_NCHW[a] for a in axes]
    else:  # batchNormalization
        if o.args[0].rank != 4 or int(opt["axis"]) != 1:
            return None
        opt["axis"] = 3
    return args, opt


@rule("layout-nhwc", *SPATIAL, limits=True, why=WHY)
def layout_nhwc(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A layout-sensitive operation in nchw run in nhwc between two transposes (see the
    module docstring); constant filters transposed now."""
    if not prefers_nhwc(rw) or not isinstance(rw.limits.get(operation.op), Mapping) or \
            not isinstance(rw.limits.get("transpose"), Mapping):
        return None
    x = operation.args[0]
    if not rw.supports("transpose", "input", x.data_type, 4):
        return None
    got = _nhwc_options(rw, operation)
    if got is None:
        return None
    args, opt = got
    args[0] = _transpose(rw, x, TO_NHWC)
    y = rw.emit(operation.op, args, opt)[0]
    rw.note("layout-nhwc", "run in nhwc (transposes cancelled between layout-converted "
                           "operations)")
    return [_transpose(rw, y, TO_NCHW)]


# -- layout-transpose / layout-reshape -----------------------------------------------------


def _reshape(rw: Rewrite, x: MLOperand, shape: Sequence[int]) -> MLOperand:
    return x if list(x.shape) == list(shape) else rw.emit1("reshape", x, list(shape))


@rule("layout-transpose", "transpose", limits=True, why=WHY)
def layout_transpose(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """transpose(transpose(y, p), q) -> transpose(y, p[q]) (nothing when the identity); a
    transpose moving only size-1 axes -> reshape."""
    if not prefers_nhwc(rw):
        return None
    x = operation.args[0]
    perm = list(operation.options.get("permutation") or range(x.rank)[::-1])
    inner = x.operator
    src = x
    if inner is not None and inner.op == "transpose" and x.kind != "constant":
        p = list(inner.options.get("permutation") or range(x.rank)[::-1])
        perm = [p[q] for q in perm]
        src = inner.args[0]
    shape = operation.outputs[0].shape
    if perm == list(range(len(perm))) or _moves_only_ones(src.shape, perm):
        if src is x and list(src.shape) == list(shape):
            return None  # the identity on x itself: nothing to gain
        return [_reshape(rw, src, shape)]
    if src is x:
        return None
    return [_transpose(rw, src, perm)]


@rule("layout-reshape", "reshape", limits=True, why=WHY)
def layout_reshape(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """reshape(reshape(y)) -> reshape(y), or y itself when the shapes agree."""
    if not prefers_nhwc(rw):
        return None
    x = operation.args[0]
    inner = x.operator
    if inner is None or inner.op != "reshape" or x.kind == "constant":
        return None
    return [_reshape(rw, inner.args[0], operation.outputs[0].shape)]


# -- layout-push ---------------------------------------------------------------------------


def _relayable(rw: Rewrite, v: MLOperand) -> bool:
    """Whether `_as_nhwc` takes `v` without a new transpose operation."""
    if transposed_from(v, TO_NCHW) is not None or all(d == 1 for d in v.shape) or \
            (id(v), TO_NHWC) in _TRANSPOSED.get(rw, {}):
        return True
    if v.rank > 4:
        return False
    return _is_const(v) or _moves_only_ones([1] * (4 - v.rank) + list(v.shape), TO_NHWC)


def _as_nhwc(rw: Rewrite, v: MLOperand) -> MLOperand:
    """An operand `v'` (`_relayable(rw, v)`) with transpose(v', TO_NCHW) broadcasting as `v`
    does against rank-4 NCHW data: the transpose's input, `v` itself when all its axes are
    1, the NHWC transpose of `v` already emitted, a constant transposed now, or a reshape
    when only size-1 axes move."""
    src = transposed_from(v, TO_NCHW)
    if src is not None:
        return src
    if all(d == 1 for d in v.shape):
        return v
    done = _TRANSPOSED.get(rw, {}).get((id(v), TO_NHWC))
    if done is not None:  # already transposed for a converted operation
        return done
    aligned = [1] * (4 - v.rank) + list(v.shape)
    if _is_const(v):
        assert v.value is not None
        value = np.asarray(v.value).reshape(aligned)
        return rw.b.constant(np.ascontiguousarray(np.transpose(value, TO_NHWC)),
                             v.data_type)
    return _reshape(rw, v, [aligned[a] for a in TO_NHWC])


def _remaining_perm(axes: Sequence[int]) -> list[int]:
    """After reducing NCHW `axes` without keeping them, the permutation that orders the NHWC
    result's kept axes as the NCHW result's."""
    kept = [a for a in range(4) if a not in axes]
    y_kept = sorted(TO_NCHW[a] for a in kept)
    return [y_kept.index(TO_NCHW[a]) for a in kept]


def _push(rw: Rewrite, o: Operation) -> list[MLOperand] | None:
    out = o.outputs[0]
    args = list(o.args)
    opt = dict(o.options)
    if o.op == "concat":
        if out.rank != 4:
            return None
        sources = [transposed_from(v, TO_NCHW) for v in o.args[0]]
        if all(s is None for s in sources) or \
                any(s is None and not _is_const(v) for s, v in zip(sources, o.args[0],
                                                                  strict=True)):
            return None
        inputs = [s if s is not None else _const_transposed(rw, v, TO_NHWC)
                  for s, v in zip(sources, o.args[0], strict=True)]
        args = [inputs, TO_NCHW[int(o.args[1])]]
    else:
        x = o.args[0]
        if o.op in PUSHED_ONE_INPUT:
            src = transposed_from(x, TO_NCHW)
            if src is None:
                return None
            args[0] = src
            if o.op == "softmax":
                args[1] = TO_NCHW[int(o.args[1])]
            elif o.op == "pad":
                begin, end = [0] * 4, [0] * 4
                for a in range(4):
                    begin[TO_NCHW[a]] = int(o.args[1][a])
                    end[TO_NCHW[a]] = int(o.args[2][a])
                args[1], args[2] = begin, end
            elif o.op in REDUCE:
                axes = list(opt["axes"] if opt.get("axes") is not None else range(4))
                opt["axes"] = [TO_NCHW[a] for a in axes]
                y = rw.emit(o.op, args, opt)[0]
                if opt["keepDimensions"]:
                    return [_transpose(rw, y, TO_NCHW)]
                perm = _remaining_perm(axes)
                return [y if perm == sorted(perm) else _transpose(rw, y, perm)]
        else:  # binary, where, prelu: every operand relaid
            if out.rank != 4:
                return None
            operands = [i for i, v in enumerate(o.args) if isinstance(v, MLOperand)]
            if not any(transposed_from(o.args[i], TO_NCHW) is not None for i in operands):
                return None
            if not all(_relayable(rw, o.args[i]) for i in operands):
                return None
            for i in operands:
                args[i] = _as_nhwc(rw, o.args[i])
    y = rw.emit(o.op, args, opt)[0]
    return [_transpose(rw, y, TO_NCHW)]


def _note_push(rw: Rewrite) -> None:
    rw.note("layout-push", "NHWC->NCHW transpose moved below the operation")


PUSHED_ONE_INPUT = frozenset({*UNARY, "pad", "softmax", *REDUCE})


@rule("layout-push", *PUSHED, limits=True, why=WHY)
def layout_push(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """An operation reading an NHWC->NCHW transpose run on the NHWC data, the transpose moved
    below it (see the module docstring)."""
    if not prefers_nhwc(rw) or len(operation.outputs) != 1:
        return None
    first = operation.args[0]
    if operation.op in PUSHED_ONE_INPUT and (not isinstance(first, MLOperand) or
                                             first.rank != 4):
        return None
    got = _push(rw, operation)
    if got is not None:
        _note_push(rw)
    return got
