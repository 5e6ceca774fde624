"""Concrete sizes for the free dimensions a model does not imply.

`UnresolvedDimensions` lists what fixes each free dimension: 1 for a batch, the size the
model implies where it implies one (`converter.frontends.free_dims`), else a placeholder
(`--dim height=N`). For the placeholders, `suggest_sizes` converts the model again at
candidate sizes and, at the first that converts, puts that size in the fixes and says how
it was chosen:

- the height and width axes of a rank-4 image input (NCHW or NHWC with 1, 3 or 4 channels):
  224, the usual image size, first;
- then the powers of two 2, 4, ... 65536, the same size for every open dimension.

Restrictions: a model of more than `MAX_SEARCHED_NODES` nodes keeps its placeholders (each
try converts it again); the size found is one at which the graph converts, not necessarily
the one the model was made for (a streaming front end's hop, a detector's training size):
the hint says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from converter.core.errors import UnresolvedDimensions
from converter.core.fixes import Fix
from converter.frontends.free_dims import (
    MAX_SEARCHED_NODES,
    SEARCHED_SIZES,
    fix_settings,
    merged_dims,
)

__all__ = ["IMAGE_SIZE", "MAX_SEARCHED_NODES", "SEARCHED_SIZES", "Settings", "merged_dims",
           "suggest_sizes"]

IMAGE_SIZE = 224
"""Tried first for the height and width of an image input; then `SEARCHED_SIZES`."""

Dim = int | str | None
Settings = tuple[dict[str, int], dict[str, dict[int, int]]]
"""(free_dims, input_dims) for one try."""


def suggest_sizes(exc: UnresolvedDimensions, inputs: Sequence[tuple[str, Sequence[Dim] | None]],
                  node_count: int, converts: Callable[[Settings], bool]) -> None:
    """Fill the placeholders among `exc.fixes` (free_dims and input_dims ones) with the first
    candidate size at which `converts` (free_dims, input_dims) succeeds, the fixes' other
    values applied too; unchanged when none converts, the model has more than
    `MAX_SEARCHED_NODES` nodes or a placeholder is a whole shape (`input_shapes`).
    `inputs` are the model's (name, declared shape) pairs."""
    open_fixes = [f for f in exc.fixes if f.value is None]
    if not open_fixes or node_count > MAX_SEARCHED_NODES \
            or any(f.option not in ("free_dims", "input_dims") for f in open_fixes):
        return
    image = all(_image_axis(f, inputs) for f in open_fixes)
    for size in ((IMAGE_SIZE,) if image else ()) + SEARCHED_SIZES:
        chosen = tuple(dataclasses.replace(f, value=size) if f.value is None else f
                       for f in exc.fixes)
        if converts(fix_settings(chosen)):
            exc.fixes = chosen
            how = (f"{size}, the usual image size" if image and size == IMAGE_SIZE
                   else f"{size}, the smallest power of two at which it converts")
            exc.hint = (f"{exc.hint}; the model implies no size for "
                        f"{', '.join(_label(f) for f in open_fixes)}: {how} (the model's "
                        "documentation may name another)")
            exc.args = (str(exc),)
            return


def _label(f: Fix) -> str:
    return f.name if f.axis is None else f"{f.name}:{f.axis}"


def _image_axis(f: Fix, inputs: Sequence[tuple[str, Sequence[Dim] | None]]) -> bool:
    """Whether every place of `f`'s dimension is the height or width axis of a rank-4
    image input (channels 1, 3 or 4 at axis 1 or 3)."""
    places = [(shape, axis) for name, shape in inputs if shape is not None
              for axis, d in enumerate(shape)
              if (f.option == "free_dims" and d == f.name)
              or (f.option == "input_dims" and name == f.name and axis == f.axis)]
    return bool(places) and all(_spatial(shape, axis) for shape, axis in places)


def _spatial(shape: Sequence[Dim], axis: int) -> bool:
    if len(shape) != 4:
        return False
    if shape[1] in (1, 3, 4):
        return axis in (2, 3)
    return shape[3] in (1, 3, 4) and axis in (1, 2)
