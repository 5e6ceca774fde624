"""Free input dimensions, shared by the front ends: checking `input_dims` (sizes of single
axes by input name and axis) against a model's inputs, and the fixes (`converter.core.errors.Fix`)
suggested for dimensions nobody fixed.

A suggested size is 1 where the dimension is almost certainly a batch: its name says so
("batch", "batch_size", "N", "bs") or, unnamed or with a name that says nothing, it is the
first axis of every input it appears in and those inputs have rank >= 2. Every other free
dimension gets a placeholder: the user has to choose (a sequence length, an image size).
Restrictions: the heuristic never looks at the graph, so a first axis that is not a batch
(e.g. a [time, features] input) is still suggested as 1.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.fixes import Fix
from converter.core.ir import Dim

_BATCH_WORDS = frozenset({"n", "b", "bs"})

InputDims = Mapping[str, Mapping[int, int]]
"""`input_dims`: {input name: {axis: size}}; negative axes count from the end."""


def is_batch_name(name: str) -> bool:
    """True for dimension names that say "batch": batch, batch_size, Batch, N, bs, ..."""
    lower = name.lower()
    return "batch" in lower or lower in _BATCH_WORDS


def check_input_dims(input_dims: Any, ranks: Mapping[str, int | None], label: str, *,
                     shapes_given: Collection[str] = ()) -> dict[str, dict[int, int]]:
    """`input_dims` checked against the inputs (`ranks`: input name -> rank, None when the
    rank is unknown) and normalised to non-negative axes.

    One-line `InvalidModel` errors: not a mapping of mappings, an unknown input, an input
    whose whole shape is also given (`shapes_given`), an input of unknown rank, an axis out
    of range (or given twice), a size that is not a positive integer.
    """
    if not input_dims:
        return {}
    if not isinstance(input_dims, Mapping):
        raise InvalidModel("input dimensions must map input names to {axis: size} "
                           f"mappings, got {type(input_dims).__name__}")
    unknown = sorted(set(input_dims) - set(ranks))
    if unknown:
        raise InvalidModel(f"input dimension(s) given for {unknown}, which are not graph "
                           f"inputs of {label} (inputs: {sorted(ranks)})")
    out: dict[str, dict[int, int]] = {}
    for name, axes in input_dims.items():
        if name in shapes_given:
            raise InvalidModel(f"input {name!r} has both a whole shape and single dimensions "
                               "given; give one of them")
        if not isinstance(axes, Mapping):
            raise InvalidModel(f"input dimensions of {name!r} must map axes to sizes, got "
                               f"{type(axes).__name__}")
        rank = ranks[name]
        if rank is None:
            raise InvalidModel(f"input {name!r} of {label} has an unknown rank: give its "
                               "whole shape instead of single dimensions")
        fixed: dict[int, int] = {}
        for axis, size in axes.items():
            if (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)
                    or not -rank <= axis < rank):
                raise InvalidModel(f"axis {axis!r} of input {name!r} is out of range: the "
                                   f"input has rank {rank} (axes 0 to {rank - 1})")
            if not _positive(size):
                raise InvalidModel(f"dimension {name}:{axis} must be a positive integer, got "
                                   f"{size!r}")
            key = int(axis) % rank
            if key in fixed and fixed[key] != int(size):
                raise InvalidModel(f"axis {key} of input {name!r} is given twice ({fixed[key]} "
                                   f"and {int(size)})")
            fixed[key] = int(size)
        out[name] = fixed
    return out


def _positive(value: Any) -> bool:
    return bool(isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                and value >= 1)


def check_free_dim_values(free_dims: Mapping[str, Any]) -> None:
    """InvalidModel naming the first named dimension whose size is not a positive integer
    or 0. A 0 makes the inputs it appears in empty: the importer turns them into constants
    and specialises the graph (an empty past KV cache: a first prompt)."""
    for key, value in free_dims.items():
        if not (_positive(value) or (isinstance(value, (int, np.integer))
                                     and not isinstance(value, bool) and value == 0)):
            raise InvalidModel(f"free dimension {key!r} must be a positive integer or 0, "
                               f"got {value!r}")


def fixes_for(inputs: Sequence[tuple[str, Sequence[Dim] | None]],
              unresolved: Collection[tuple[str, int | None]] | None = None
              ) -> tuple[Fix, ...]:
    """The fixes for the free dimensions of `inputs` ((name, shape) pairs; a shape entry is
    an int, a dimension name or None; a shape None means unknown rank), in input order:
    `free_dims` for named dimensions (once per name), `input_dims` for unnamed ones,
    `input_shapes` for inputs of unknown rank. `unresolved` limits them to those
    (input, axis) pairs (axis None: the whole shape)."""
    where: dict[str, list[tuple[int, int]]] = {}
    for _name, shape in inputs:
        for axis, d in enumerate(shape or ()):
            if isinstance(d, str):
                where.setdefault(d, []).append((axis, len(shape or ())))
    fixes: list[Fix] = []
    for name, shape in inputs:
        if shape is None:
            if unresolved is None or (name, None) in unresolved:
                fixes.append(Fix("input_shapes", name))
            continue
        for axis, d in enumerate(shape):
            if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
                continue
            if unresolved is not None and (name, axis) not in unresolved:
                continue
            if isinstance(d, str):
                batch = is_batch_name(d) or all(a == 0 and r >= 2 for a, r in where[d])
                fixes.append(Fix("free_dims", d, value=1 if batch else None))
            else:
                batch = axis == 0 and len(shape) >= 2
                fixes.append(Fix("input_dims", name, axis=axis, value=1 if batch else None))
    return tuple(dict.fromkeys(fixes))
