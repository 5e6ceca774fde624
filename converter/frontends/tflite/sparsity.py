"""Densifying TFLite sparse constants (`Tensor.sparsity`), so the reader hands dense arrays
to the importer and DENSIFY is a pure pass-through. The dense size is checked against the
`max_constant_bytes` budget (`converter.core.budgets.active()`) before anything is allocated."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from converter.core.budgets import Budgets, active, nbytes
from converter.core.errors import InvalidModel
from converter.core.ir import Sparsity


def densify(values: np.ndarray, shape: Sequence[int], sp: Sparsity, what: str = "tensor",
            label: str = "", budgets: Budgets | None = None) -> np.ndarray:
    """The dense tensor of a TFLite sparse constant (TACO-style format: dense and CSR
    levels in `traversal_order`, block dimensions after the tensor's own).
    Vectorised per level: positions and coordinates are carried as arrays. The dense size
    is checked first against `budgets` (default the active ones; the reader passes them
    knowing the file's size, so a tiny file cannot densify to gigabytes)."""
    shape = tuple(int(d) for d in shape)
    budgets = budgets or active()
    budgets.check("max_constant_bytes", nbytes(shape, values.dtype.itemsize),
                  f"{label}: the sparse {what} would densify to")

    def check_frontier(size: int, arrays: int) -> None:
        """The index arrays of the next level (`arrays` int64 arrays of `size`): the
        metadata's dense sizes are not tied to the shape, so they are budgeted too."""
        budgets.check("max_constant_bytes", nbytes(size, 8 * arrays),
                      f"{label}: densifying the sparse {what} needs index arrays of")
    n = len(shape)
    order, bmap, levels = sp.traversal_order, sp.block_map, sp.dimensions
    k = len(bmap)
    if len(order) != n + k or len(levels) != n + k:
        raise InvalidModel(f"{label}: {what}: sparsity has {len(order)} traversal entries and "
                           f"{len(levels)} levels for rank {n} with {k} block dims")
    # positions of the current frontier and the coordinate per level
    pos = np.zeros(1, np.int64)
    coords: list[np.ndarray] = []
    for meta in levels:
        if meta.format == "dense":
            size = meta.dense_size
            if size < 0 or pos.size * max(size, 1) > 1 << 31:
                raise InvalidModel(f"{label}: {what}: sparse dense level size {size} too large")
            check_frontier(pos.size * max(size, 1), len(coords) + 3)
            new_pos = (pos[:, None] * size + np.arange(size)[None, :]).reshape(-1)
            coords = [np.repeat(c, size) for c in coords]
            coords.append(np.tile(np.arange(size, dtype=np.int64), pos.size))
            pos = new_pos
        else:
            seg, idx = meta.segments, meta.indices
            assert seg is not None and idx is not None
            if pos.size and (pos.max() + 1 >= seg.size):
                raise InvalidModel(f"{label}: {what}: sparse segments too short")
            starts, ends = seg[pos], seg[pos + 1]
            counts = ends - starts
            if np.any(counts < 0) or (ends.size and ends.max() > idx.size):
                raise InvalidModel(f"{label}: {what}: sparse segments out of range")
            total = int(counts.sum())
            check_frontier(total, len(coords) + 4)
            first = np.repeat(np.cumsum(counts) - counts, counts)
            new_pos = np.arange(total, dtype=np.int64) - first + np.repeat(starts, counts)
            new_pos = new_pos.astype(np.int64)
            coords = [np.repeat(c, counts) for c in coords]
            coords.append(idx[new_pos])
            pos = new_pos
    if pos.size != values.size or (pos.size and int(pos.max()) >= values.size):
        raise InvalidModel(f"{label}: {what}: sparse structure addresses {pos.size} values, "
                           f"the buffer holds {values.size}")
    orig = [np.zeros(pos.size, np.int64) for _ in range(n)]
    for level in range(n):
        orig[order[level]] = coords[level]
    for level in range(n, n + k):
        b = order[level] - n
        dim = bmap[b]
        block = levels[level].dense_size
        orig[dim] = orig[dim] * block + coords[level]
    dense = np.zeros(shape, values.dtype)
    for d in range(n):
        if orig[d].size and (orig[d].min() < 0 or orig[d].max() >= shape[d]):
            raise InvalidModel(f"{label}: {what}: sparse coordinates exceed shape {list(shape)}")
    dense[tuple(orig)] = values[pos]
    return dense
