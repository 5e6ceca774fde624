"""Compact forms of constant arrays: a splat (one repeated element), a band matrix, or a
broadcast of a smaller array, found while the numpy array is at hand; the emitter notes them
(`Emitter.add_initializer`) and `compact.compact_constants` writes them (see that module's
docstring for the forms and their restrictions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Initializers larger than this (in bytes) are checked for splats and broadcasts. A
#: ConstantOfShape node costs about 100 bytes of protobuf, so rewriting pays off from about
#: 128 bytes; 256 (64 float32 elements, the size up to which `Emitter.const` deduplicates)
#: keeps scalars, shapes and small parameter vectors verbatim while still compacting the
#: per-channel splat vectors of wide layers (e.g. [256, 1, 1] batch-norm factors).
COMPACT_MIN_BYTES = 256


def _bits(arr: np.ndarray) -> np.ndarray:
    """`arr` viewed as unsigned integers of the same width (bit-exact comparisons)."""
    return arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.itemsize in (1, 2, 4, 8) else arr


def broadcast_source(arr: np.ndarray) -> np.ndarray:
    """The smallest array of the same rank, with size 1 on every axis along which `arr` is
    constant (bit-exactly), whose broadcast to `arr.shape` is `arr`. Returns `arr` itself
    when it is constant along no axis of size > 1."""
    bits = _bits(np.ascontiguousarray(arr))
    for axis in range(bits.ndim):
        n = bits.shape[axis]
        if n <= 1:
            continue
        first = (slice(None),) * axis + (slice(0, 1),)
        origin = (0,) * bits.ndim
        probe = origin[:axis] + (1,) + origin[axis + 1:]
        if bits.size and bits[origin] != bits[probe]:
            continue  # cheap rejection: most weights differ right at the origin
        head = bits[first]
        if np.array_equal(bits, np.broadcast_to(head, bits.shape)):
            bits = head
    if bits.shape == arr.shape:
        return arr
    return np.ascontiguousarray(bits).view(arr.dtype)


def band_form(arr: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """(value, lo, hi) when the float32 `arr` (rank >= 2, leading axes of size 1) holds
    `value` (bit-exactly, nonzero) where `lo <= j - i <= hi` on its last two axes (i the row,
    j the column) and +0.0 elsewhere, a band matrix like the ones the LRN decomposition
    builds; None otherwise (also for full matrices, which are splats)."""
    if arr.ndim < 2 or arr.dtype != np.float32 or any(d != 1 for d in arr.shape[:-2]):
        return None
    bits = _bits(np.ascontiguousarray(arr)).reshape(arr.shape[-2:])
    n, m = int(arr.shape[-2]), int(arr.shape[-1])
    if bits[0, m - 1] != 0 and bits[n - 1, 0] != 0:
        return None  # cheap rejection: a band that is not full has a zero corner
    rows, cols = np.nonzero(bits)
    if rows.size == 0:
        return None
    diag = cols - rows
    lo, hi = int(diag.min()), int(diag.max())
    value = bits[rows[0], cols[0]]
    offset = np.arange(m)[None, :] - np.arange(n)[:, None]
    band = np.where((offset >= lo) & (offset <= hi), value, 0).astype(bits.dtype)
    if not np.array_equal(bits, band):
        return None
    return np.asarray([value], bits.dtype).view(arr.dtype), lo, hi


@dataclass(frozen=True)
class CompactForm:
    """How to rebuild a constant of shape `shape` from little data.

    `source_shape`: the broadcast source's shape (same rank, 1 on the axes the constant is
    constant along). Exactly one of: `source` (the source's values: Expand), `band`
    ((lo, hi): the source is the band matrix of `value`), or neither (the source is the
    single element `value`: ConstantOfShape).
    """

    shape: tuple[int, ...]
    source_shape: tuple[int, ...]
    value: np.ndarray | None = None
    source: np.ndarray | None = None
    band: tuple[int, int] | None = None


def compact_form(arr: np.ndarray, min_bytes: int = COMPACT_MIN_BYTES) -> CompactForm | None:
    """The compact form of `arr` (splat, band or broadcast), or None when `arr` has at most
    `min_bytes` bytes or none of these structures. The form holds no reference to `arr`."""
    if arr.ndim == 0 or arr.nbytes <= min_bytes or arr.dtype.kind not in "biuf":
        return None
    small = broadcast_source(arr)
    shape, source_shape = tuple(arr.shape), tuple(small.shape)
    if small.size == 1:
        return CompactForm(shape, source_shape, value=small.reshape(1).copy())
    band = band_form(small) if small.nbytes > min_bytes else None
    if band is not None:
        return CompactForm(shape, source_shape, value=band[0], band=(band[1], band[2]))
    if small is arr:
        return None
    return CompactForm(shape, source_shape, source=small.copy())
