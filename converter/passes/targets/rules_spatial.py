"""Rules for the spatial ops Chromium's LiteRT backend gets wrong or refuses: pool padding
and dilations, convTranspose2d groups / dilations / explicit padding, scatterElements with
run-time indices, slice strides longer than the slice, edge padding (see `converter.passes.targets.passes`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import type_range
from converter.core.webnn.operand import Operation
from converter.passes.targets.fitting import attempt
from converter.passes.targets.rewrite import Rewrite, rule


def _spatial(layout: str) -> tuple[int, int]:
    return (2, 3) if layout == "nchw" else (1, 2)


def _geometry(operation: Operation) -> dict[str, list[int]]:
    """Pool geometry per spatial axis (height, width): input sizes `n`, window `k`, strides
    `s`, dilations `d`, paddings `p0`/`p1`, output sizes `o`."""
    x, out, opt = operation.args[0], operation.outputs[0], operation.options
    h, w = _spatial(opt["layout"])
    pad = list(opt["padding"])
    return {"n": [x.shape[h], x.shape[w]], "k": list(opt["windowDimensions"]),
            "s": list(opt["strides"]), "d": list(opt["dilations"]),
            "p0": [pad[0], pad[2]], "p1": [pad[1], pad[3]], "o": [out.shape[h], out.shape[w]]}


def _valid_counts(g: Mapping[str, list[int]]) -> np.ndarray:
    """Per output position (height x width), how many window cells lie on real cells."""
    per_axis = []
    for n, k, s, d, p, o in zip(g["n"], g["k"], g["s"], g["d"], g["p0"], g["o"], strict=True):
        pos = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - p
        per_axis.append(((pos >= 0) & (pos < n)).sum(axis=1))
    return np.outer(per_axis[0], per_axis[1]).astype(np.float64)


def _map_shape(layout: str, sizes: Sequence[int]) -> list[int]:
    return [1, 1, *sizes] if layout == "nchw" else [1, *sizes, 1]


def _spatial_pad(rw: Rewrite, x: MLOperand, layout: str, begin: Sequence[int],
                 end: Sequence[int], value: float = 0.0) -> MLOperand:
    """`x` padded with `value` (height, width: `begin` / `end`)."""
    h, w = _spatial(layout)
    b0, e0 = [0] * 4, [0] * 4
    b0[h], b0[w] = begin
    e0[h], e0[w] = end
    return rw.emit1("pad", x, b0, e0, value=value) if any(b0) or any(e0) else x


def _needed_end(g: Mapping[str, list[int]]) -> list[int]:
    """End padding that makes the padded input as long as the output windows reach (ceil
    rounding may let the last window hang over the input and its padding)."""
    return [(o - 1) * s + (k - 1) * d + 1 - p - n
            for o, s, k, d, p, n in zip(g["o"], g["s"], g["k"], g["d"], g["p0"], g["n"],
                                        strict=True)]


@rule("pool-padding", "averagePool2d", "l2Pool2d",
      why="Chromium counts padded cells in averagePool2d windows and rescales l2Pool2d by "
          "them under symmetric padding; the spec leaves them out (WebNN issue #876)")
def pool_padding(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """averagePool2d / l2Pool2d whose windows reach padding (explicit padding, or ceil
    rounding letting the last window hang over the input): pad explicitly with zeros, pool
    without padding, and for averagePool2d multiply by (window cells / real cells) per output
    position. (Zeros add nothing to l2Pool2d's sum of squares.)"""
    g = _geometry(operation)
    end = [max(p, e) for p, e in zip(g["p1"], _needed_end(g), strict=True)]
    if not any(g["p0"]) and not any(end):
        return None
    opt = operation.options
    layout = opt["layout"]
    padded = _spatial_pad(rw, operation.args[0], layout, g["p0"], end)
    options = {k: v for k, v in opt.items() if k not in ("outputSizes",)}
    options.update(padding=[0, 0, 0, 0], outputShapeRounding="floor")
    pooled = rw.emit(operation.op, [padded], options)[0]
    if operation.op == "l2Pool2d":
        rw.note("pool-padding", "padded explicitly with zeros")
        return [pooled]
    factor = float(g["k"][0] * g["k"][1]) / _valid_counts(g)
    rw.note("pool-padding", "padded explicitly with zeros, the mean rescaled to the real cells")
    if np.all(factor == 1.0):
        return [pooled]
    scale = rw.const(factor.reshape(_map_shape(layout, g["o"])), pooled.data_type)
    return [rw.emit1("mul", pooled, scale)]


def _strided(rw: Rewrite, x: MLOperand, axis: int, start: int, count: int, stride: int
             ) -> MLOperand:
    """`count` elements of `x` along `axis` from `start` every `stride`-th."""
    starts = [0] * x.rank
    sizes = list(x.shape)
    starts[axis] = start
    sizes[axis] = (count - 1) * stride + 1
    strides = [1] * x.rank
    strides[axis] = stride if count > 1 else 1
    if sizes == list(x.shape) and start == 0 and strides[axis] == 1:
        return x
    return rw.emit1("slice", x, starts, sizes, strides=strides)


@rule("pool-dilations", "averagePool2d", "l2Pool2d", "maxPool2d",
      why="Chromium (LiteRT) cannot build pools with dilations")
def pool_dilations(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A pool with dilations as strided slices of the (explicitly padded) input combined
    along the width, then along the height (max; sum, then divided by the real cells per
    window for averagePool2d; sum of squares, then the square root, for l2Pool2d)."""
    g = _geometry(operation)
    if g["d"] == [1, 1]:
        return None
    op, opt = operation.op, operation.options
    layout = opt["layout"]
    x = operation.args[0]
    fill = 0.0
    if op == "maxPool2d":
        fill = float("-inf") if x.data_type in ("float32", "float16") \
            else float(type_range(x.data_type)[0])
    end = [max(p, e) for p, e in zip(g["p1"], _needed_end(g), strict=True)]
    y = _spatial_pad(rw, x, layout, g["p0"], end, value=fill)
    if op == "l2Pool2d":
        y = rw.emit1("mul", y, y)
    combine = "max" if op == "maxPool2d" else "add"
    for i in (1, 0):  # width, then height
        axis = _spatial(layout)[i]
        acc = None
        for j in range(g["k"][i]):
            part = _strided(rw, y, axis, j * g["d"][i], g["o"][i], g["s"][i])
            acc = part if acc is None else rw.emit1(combine, acc, part)
        assert acc is not None
        y = acc
    if op == "averagePool2d":
        counts = _valid_counts(g).reshape(_map_shape(layout, g["o"]))
        y = rw.emit1("div", y, rw.const(counts, y.data_type))
    elif op == "l2Pool2d":
        y = rw.emit1("sqrt", y)
    rw.note("pool-dilations", f"dilations {g['d']} as strided slices")
    return [y]


_CT_FILTER_AXES = {"iohw": (0, 1, (2, 3)), "hwoi": (3, 2, (0, 1)), "ohwi": (3, 0, (1, 2))}
"""convTranspose2d filter layout -> (input channel axis, output channel axis, spatial axes)."""


@rule("convtranspose-groups", "convTranspose2d",
      why="Chromium (LiteRT) cannot build convTranspose2d with groups")
def convtranspose_groups(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """convTranspose2d with groups > 1: one convTranspose2d per group (input channels,
    filter input channels and bias split), outputs concatenated along the channels."""
    opt = operation.options
    groups = int(opt["groups"])
    if groups == 1:
        return None
    x, w = operation.args
    c_axis = 1 if opt["inputLayout"] == "nchw" else 3
    xs = rw.emit("split", [x, groups], {"axis": c_axis})
    ws = rw.emit("split", [w, groups], {"axis": _CT_FILTER_AXES[opt["filterLayout"]][0]})
    bias = opt.get("bias")
    bs = rw.emit("split", [bias, groups], {"axis": 0}) if bias is not None else [None] * groups
    outs = []
    for xi, wi, bi in zip(xs, ws, bs, strict=True):
        options = {k: v for k, v in opt.items() if k != "bias"}
        options["groups"] = 1
        if bi is not None:
            options["bias"] = bi
        outs.append(rw.emit("convTranspose2d", [xi, wi], options)[0])
    rw.note("convtranspose-groups", f"{groups} groups as one convTranspose2d per group")
    return [rw.emit1("concat", outs, c_axis)]


def _dilate_axis(rw: Rewrite, w: MLOperand, axis: int, d: int) -> MLOperand:
    """`w` with d - 1 zeros between neighbours along `axis` (reshape, pad, reshape, slice)."""
    shape = list(w.shape)
    k = shape[axis]
    grown = shape[:axis + 1] + [1] + shape[axis + 1:]
    y = rw.emit1("reshape", w, grown)
    ends = [0] * len(grown)
    ends[axis + 1] = d - 1
    y = rw.emit1("pad", y, [0] * len(grown), ends)
    flat = shape[:axis] + [k * d] + shape[axis + 1:]
    y = rw.emit1("reshape", y, flat)
    sizes = list(flat)
    sizes[axis] = (k - 1) * d + 1
    return rw.emit1("slice", y, [0] * len(flat), sizes)


@rule("convtranspose-dilations", "convTranspose2d",
      why="Chromium (LiteRT) cannot build convTranspose2d with dilations")
def convtranspose_dilations(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """convTranspose2d with dilations: the filter dilated (zeros between its taps; computed
    here for a constant filter, with reshape/pad/slice otherwise) and dilations 1."""
    opt = operation.options
    dil = list(opt["dilations"])
    if dil == [1, 1]:
        return None
    x, w = operation.args
    spatial = _CT_FILTER_AXES[opt["filterLayout"]][2]
    if w.kind == "constant" and w.value is not None:
        shape = list(w.shape)
        for axis, d in zip(spatial, dil, strict=True):
            shape[axis] = (shape[axis] - 1) * d + 1
        arr = np.zeros(shape, dtype=w.value.dtype)
        index: list[Any] = [slice(None)] * 4
        for axis, d in zip(spatial, dil, strict=True):
            index[axis] = slice(None, None, d)
        arr[tuple(index)] = w.value
        dilated = rw.b.constant(arr, w.data_type)
    else:
        dilated = w
        for axis, d in zip(spatial, dil, strict=True):
            if d > 1:
                dilated = _dilate_axis(rw, dilated, axis, d)
    options = dict(opt)
    options["dilations"] = [1, 1]
    rw.note("convtranspose-dilations", f"dilations {dil} as a dilated filter")
    return rw.emit("convTranspose2d", [x, dilated], options)


@rule("convtranspose-padding", "convTranspose2d",
      why="Chromium (LiteRT) cannot build convTranspose2d with most explicit padding")
def convtranspose_padding(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """convTranspose2d with padding: without padding (outputPadding covering what the padded
    output reaches past the full one), then the padded-away border sliced off."""
    opt = operation.options
    pad = list(opt["padding"])
    if not any(pad):
        return None
    x, w = operation.args
    out = operation.outputs[0]
    h, wa = _spatial(opt["inputLayout"])
    k = _CT_FILTER_AXES[opt["filterLayout"]][2]
    starts, sizes, extra = [0] * 4, list(out.shape), []
    for i, axis in enumerate((h, wa)):
        full = ((x.shape[axis] - 1) * opt["strides"][i]
                + (w.shape[k[i]] - 1) * opt["dilations"][i] + 1)
        begin = pad[2 * i]
        extra.append(max(0, begin + out.shape[axis] - full))
        starts[axis] = begin
    options = {key: v for key, v in opt.items() if key != "outputSizes"}
    options.update(padding=[0, 0, 0, 0], outputPadding=extra)
    y = rw.emit("convTranspose2d", [x, w], options)[0]
    rw.note("convtranspose-padding", "padding as a crop of the unpadded result")
    return [rw.emit1("slice", y, starts, sizes)]


@rule("scatterelements-indices", "scatterElements",
      why="Chromium (LiteRT) builds scatterElements only with constant indices")
def scatterelements_indices(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """scatterElements with indices computed at run time: scatterND with full coordinates
    (every axis' position, the indices along `axis`)."""
    x, idx, upd = operation.args
    if idx.kind == "constant":
        return None
    axis = int(operation.options["axis"])
    shape = list(idx.shape)
    grid = np.indices(shape, dtype=np.int32)
    parts = []
    for j in range(len(shape)):
        if j == axis:
            parts.append(rw.emit1("reshape", rw.cast(idx, "int32"), [*shape, 1]))
        else:
            parts.append(rw.const(grid[j].reshape(*shape, 1), "int32"))
    coords = parts[0] if len(parts) == 1 else rw.emit1("concat", parts, len(shape))
    rw.note("scatterelements-indices", "run-time indices: scatterND instead")
    return [rw.emit1("scatterND", x, coords, upd)]


@rule("slice-strides", "slice",
      why="Chromium (LiteRT) rejects a slice stride longer than the sliced size")
def slice_strides(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """slice whose stride exceeds the size it slices (one element taken): stride 1."""
    x, starts, sizes = operation.args
    strides = list(operation.options["strides"])
    fixed = [1 if k > n else k for k, n in zip(strides, sizes, strict=True)]
    if fixed == strides:
        return None
    rw.note("slice-strides", "strides longer than the sliced size set to 1")
    return [rw.emit1("slice", x, starts, sizes, strides=fixed)]


def _edge(rw: Rewrite, x: MLOperand, axis: int, at: int, count: int) -> list[MLOperand]:
    """The slice of `x` at index `at` along `axis` repeated `count` times (expand), as a
    list of one operand; [] when `count` is 0."""
    if not count:
        return []
    starts, sizes = [0] * x.rank, list(x.shape)
    starts[axis], sizes[axis] = at, 1
    border = rw.emit1("slice", x, starts, sizes)
    sizes[axis] = count
    return [border if count == 1 else rw.emit1("expand", border, sizes)]


@rule("pad-edge", "pad",
      why="Chromium (LiteRT) rejects pad with mode 'edge' at build ('not supported in tflite "
          "schema')")
def pad_edge(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """pad with mode "edge": axis by axis, the border slice (size 1) expanded to the
    beginning / ending padding count and concatenated on either side (any rank and data
    type; later axes repeat the already padded corners, as edge padding does). Kept only when
    every slice / expand / concat fits the target's limits."""
    x, begin, end = operation.args
    if operation.options.get("mode") != "edge" or not (any(begin) or any(end)):
        return None

    def build() -> list[MLOperand]:
        y = x
        for axis, (b0, e0) in enumerate(zip(begin, end, strict=True)):
            if not b0 and not e0:
                continue
            head = _edge(rw, y, axis, 0, b0)
            tail = _edge(rw, y, axis, y.shape[axis] - 1, e0)
            y = rw.emit1("concat", [*head, y, *tail], axis)
        return [y]

    return attempt(rw, operation, "pad-edge", "edge padding as border slices concatenated",
                   build)


# ============================================================================================
# data types outside the target's opSupportLimits()
# ============================================================================================

