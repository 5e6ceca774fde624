"""Reference kernels: gather, gatherElements, gatherND, scatterElements, scatterND.

Index values: clamped into [-size, size - 1] of their dimension, then negative ones wrap
(index + size). Scatter ops: when several indices address the same element, the update that
comes last in row-major order of `updates` wins. Values are moved exactly, never converted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import kernel


def normalize(indices: np.ndarray, size: int | np.ndarray) -> np.ndarray:
    """Clamp index values into [-size, size - 1] and wrap negatives: int64 in [0, size)."""
    idx = np.asarray(indices).astype(np.int64)
    size = np.asarray(size, dtype=np.int64)
    idx = np.clip(idx, -size, size - 1)
    return np.where(idx < 0, idx + size, idx)


@kernel("gather")
def gather(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, indices = args
    axis = options["axis"]
    return [np.take(x, normalize(indices, x.shape[axis]), axis=axis)]


@kernel("gatherElements")
def gather_elements(op: Operation, args: list[Any], options: dict[str, Any]
                    ) -> list[np.ndarray]:
    x, indices = args
    axis = options["axis"]
    return [np.take_along_axis(x, normalize(indices, x.shape[axis]), axis=axis)]


def _nd_coordinates(shape: tuple[int, ...], indices: np.ndarray) -> tuple[np.ndarray, ...]:
    """The normalised coordinates of gatherND/scatterND indices (last dimension k)."""
    k = indices.shape[-1]
    idx = normalize(indices, np.array(shape[:k], dtype=np.int64))
    return tuple(idx[..., i] for i in range(k))


@kernel("gatherND")
def gather_nd(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, indices = args
    return [x[_nd_coordinates(x.shape, indices)]]


def _last_wins(flat_targets: np.ndarray) -> np.ndarray:
    """Positions (into flat_targets) of the last occurrence of each distinct target."""
    reversed_targets = flat_targets[::-1]
    _, first = np.unique(reversed_targets, return_index=True)
    return flat_targets.size - 1 - first


@kernel("scatterElements")
def scatter_elements(op: Operation, args: list[Any], options: dict[str, Any]
                     ) -> list[np.ndarray]:
    x, indices, updates = args
    axis = options["axis"]
    coords = list(np.indices(indices.shape, sparse=True))
    coords[axis] = normalize(indices, x.shape[axis])
    grids = np.broadcast_arrays(*coords)
    targets = np.ravel_multi_index(tuple(c.ravel() for c in grids), x.shape)
    keep = _last_wins(targets)
    out = x.copy()
    out.reshape(-1)[targets[keep]] = updates.reshape(-1)[keep]
    return [out]


@kernel("scatterND")
def scatter_nd(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, indices, updates = args
    k = indices.shape[-1]
    coords = _nd_coordinates(x.shape, indices)
    targets = np.ravel_multi_index(tuple(c.ravel() for c in coords), x.shape[:k])
    keep = _last_wins(targets)
    out = x.copy()
    rows = out.reshape((-1,) + x.shape[k:])
    rows[targets[keep]] = updates.reshape((-1,) + x.shape[k:])[keep]
    return [out]
