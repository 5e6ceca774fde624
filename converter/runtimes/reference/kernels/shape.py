"""Reference kernels: concat, expand, pad, reshape, reverse, slice, split, tile, transpose,
triangular. Pure data movement: values are copied exactly in their own data type."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import kernel


@kernel("concat")
def concat(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    inputs, axis = args
    return [np.concatenate(inputs, axis=axis)]


@kernel("expand")
def expand(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, shape = args
    return [np.ascontiguousarray(np.broadcast_to(x, tuple(shape)))]


@kernel("pad")
def pad(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    """constant: fill with options["value"] (already cast to the data type); edge: repeat
    the border; reflection: mirror excluding the border (numpy's "reflect")."""
    x, begin, end = args
    widths = list(zip(begin, end, strict=True))
    mode = options["mode"]
    if mode == "constant":
        return [np.pad(x, widths, mode="constant",
                       constant_values=np.array(options["value"], dtype=x.dtype))]
    return [np.pad(x, widths, mode="edge" if mode == "edge" else "reflect")]


@kernel("reshape")
def reshape(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, shape = args
    return [x.reshape(tuple(shape))]


@kernel("reverse")
def reverse(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x = args[0]
    axes = tuple(options["axes"])
    return [np.flip(x, axis=axes) if axes else x]


@kernel("slice")
def slice_(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, starts, sizes = args
    index = tuple(slice(s, s + n, k) for s, n, k in zip(starts, sizes, options["strides"],
                                                         strict=True))
    return [x[index]]


@kernel("split")
def split(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    """`splits` is either a count of equal parts or the list of part sizes."""
    x, splits = args
    axis = options["axis"]
    if isinstance(splits, int):
        return list(np.split(x, splits, axis=axis))
    bounds = list(itertools.accumulate(splits))[:-1]
    return list(np.split(x, bounds, axis=axis))


@kernel("tile")
def tile(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, reps = args
    return [np.tile(x, tuple(reps)) if reps else x]


@kernel("transpose")
def transpose(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    return [np.transpose(args[0], options["permutation"])]


@kernel("triangular")
def triangular(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    """Element (i, j) of each trailing matrix is kept when j - i >= diagonal (upper) or
    j - i <= diagonal (lower), otherwise set to 0."""
    x = args[0]
    rows, cols = x.shape[-2:]
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    diagonal = options["diagonal"]
    keep = offset >= diagonal if options["upper"] else offset <= diagonal
    return [np.where(keep, x, np.zeros((), dtype=x.dtype))]
