"""Free input dimensions, shared by the front ends: checking `input_dims` (sizes of single
axes by input name and axis) against a model's inputs, and the fixes (`converter.core.errors.Fix`)
suggested for dimensions nobody fixed.

Batches default to 1 (`batch_defaults`): a dimension is taken as a batch when its name says
so ("batch", "batch_size", "N", "bs"), when it has a generated name (tf2onnx's `unk__749`,
torch dynamo's `s0` / `s77`, torch's `input_dynamic_axes_1`) and is the first axis of every
input it appears in (rank >= 2), or when it is the unnamed first axis of an image-like input
(rank >= 3). The front ends convert those at 1 without being asked and say so in the report
(`default_note`, naming the flag that sets another size).

Every other free dimension is suggested (`fixes_for`): 1 where it is probably a batch (the
first axis of every input it appears in, rank >= 2), else the size the model implies
(`suggested`: a front end's findings such as model metadata, or `matching_sizes`: another
input of the same rank whose known dimensions agree), else a placeholder the user has to
choose (a sequence length, an image size).
Restrictions: the heuristics never look at the graph, so a first axis that is not a batch
(e.g. a [time, features] input with a generated name) is still taken as 1.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.fixes import Fix, render_fixes
from converter.core.ir import Dim

_BATCH_WORDS = frozenset({"n", "b", "bs"})
_GENERATED = re.compile(r"unk__\d+|s\d+|.*_dynamic_axes_\d+")
"""Names exporters make up for dimensions nobody named: tf2onnx `unk__749`, torch dynamo
`s0`, torch.onnx's `input_dynamic_axes_1`."""

DimKey = str | tuple[str, int]
"""A free dimension: its name, or (input name, axis) for an unnamed one."""

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


def _where(inputs: Sequence[tuple[str, Sequence[Dim] | None]]
           ) -> dict[str, list[tuple[int, int]]]:
    """Named dimension -> the (axis, rank) of each place it appears in."""
    where: dict[str, list[tuple[int, int]]] = {}
    for _name, shape in inputs:
        for axis, d in enumerate(shape or ()):
            if isinstance(d, str):
                where.setdefault(d, []).append((axis, len(shape or ())))
    return where


def _free(d: Dim) -> bool:
    return _size(d) is None


def _size(d: Dim) -> int | None:
    """The fixed size of a dimension entry; None for a free one."""
    return int(d) if isinstance(d, (int, np.integer)) and not isinstance(d, bool) else None


def batch_defaults(inputs: Sequence[tuple[str, Sequence[Dim] | None]]) -> dict[DimKey, Fix]:
    """The free dimensions of `inputs` ((name, shape) pairs as `fixes_for` takes them) that
    are taken as a batch of 1 when nobody sets them (see the module docstring), each with
    the fix that sets it (value 1)."""
    where = _where(inputs)
    out: dict[DimKey, Fix] = {}
    for name, shape in inputs:
        for axis, d in enumerate(shape or ()):
            if isinstance(d, str):
                if d not in out and (is_batch_name(d) or (
                        _GENERATED.fullmatch(d) is not None
                        and all(a == 0 and r >= 2 for a, r in where[d]))):
                    out[d] = Fix("free_dims", d, value=1)
            elif _free(d) and axis == 0 and len(shape or ()) >= 3:
                out[(name, 0)] = Fix("input_dims", name, axis=0, value=1)
    return out


def default_note(used: Sequence[Fix]) -> str:
    """The report note for the batch dimensions set to 1 by default, naming the settings
    that choose another size in both spellings."""
    what = ", ".join(f.name if f.option == "free_dims" else f"{f.name}[{f.axis}]"
                     for f in used)
    other = [Fix(f.option, f.name, axis=f.axis) for f in used]
    return (f"free batch dimension(s) converted at 1: {what}; set another size with "
            f"{render_fixes(other, 'cli')} (command line) or {render_fixes(other, 'python')} "
            "(Python)")


def matching_sizes(inputs: Sequence[tuple[str, Sequence[Dim] | None]]
                   ) -> dict[DimKey, int]:
    """Sizes implied by another input: a free dimension at an axis where another input of
    the same rank, whose known dimensions agree with this one's, has a fixed size (and
    every such input the same size)."""
    out: dict[DimKey, int] = {}
    for name, shape in inputs:
        for axis, d in enumerate(shape or ()):
            if not _free(d) or shape is None:
                continue
            sizes = {_size(o[axis]) for n, o in inputs
                     if n != name and o is not None and len(o) == len(shape) and all(
                         _free(a) or _free(b) or _size(a) == _size(b)
                         for a, b in zip(shape, o, strict=True))}
            sizes.discard(None)
            if len(sizes) == 1:
                size = sizes.pop()
                assert size is not None
                out.setdefault(d if isinstance(d, str) else (name, axis), size)
    return out


def fixes_for(inputs: Sequence[tuple[str, Sequence[Dim] | None]],
              unresolved: Collection[tuple[str, int | None]] | None = None,
              suggested: Mapping[DimKey, int] | None = None
              ) -> tuple[Fix, ...]:
    """The fixes for the free dimensions of `inputs` ((name, shape) pairs; a shape entry is
    an int, a dimension name or None; a shape None means unknown rank), in input order:
    `free_dims` for named dimensions (once per name), `input_dims` for unnamed ones,
    `input_shapes` for inputs of unknown rank. `unresolved` limits them to those
    (input, axis) pairs (axis None: the whole shape). Values: 1 for a probable batch, else
    the size `suggested` or another input implies (`matching_sizes`), else a placeholder."""
    where = _where(inputs)
    implied = {**matching_sizes(inputs), **(suggested or {})}
    fixes: list[Fix] = []
    for name, shape in inputs:
        if shape is None:
            if unresolved is None or (name, None) in unresolved:
                fixes.append(Fix("input_shapes", name))
            continue
        for axis, d in enumerate(shape):
            if not _free(d):
                continue
            if unresolved is not None and (name, axis) not in unresolved:
                continue
            if isinstance(d, str):
                batch = is_batch_name(d) or all(a == 0 and r >= 2 for a, r in where[d])
                fixes.append(Fix("free_dims", d, value=1 if batch else implied.get(d)))
            else:
                batch = axis == 0 and len(shape) >= 2
                fixes.append(Fix("input_dims", name, axis=axis,
                                 value=1 if batch else implied.get((name, axis))))
    return tuple(dict.fromkeys(fixes))


SEARCHED_SIZES = tuple(2 ** k for k in range(1, 17))
"""The sizes tried, smallest first, for free dimensions the model implies no size for
(`converter.conversion.size_search`, the TFLite front end's stored-size search)."""

MAX_SEARCHED_NODES = 2000
"""Models with more nodes keep their placeholders (each try converts the model again)."""


def fix_settings(fixes: Sequence[Fix]) -> tuple[dict[str, int], dict[str, dict[int, int]]]:
    """(free_dims, input_dims) that apply the concrete `free_dims` / `input_dims` fixes."""
    free: dict[str, int] = {}
    dims: dict[str, dict[int, int]] = {}
    for f in fixes:
        if f.option == "free_dims" and isinstance(f.value, int):
            free[f.name] = f.value
        elif f.option == "input_dims" and f.axis is not None and isinstance(f.value, int):
            dims.setdefault(f.name, {})[f.axis] = f.value
    return free, dims


def merged_dims(given: InputDims | None, more: InputDims) -> dict[str, dict[int, int]]:
    """`given` input_dims with `more` added axis by axis."""
    out = {name: dict(axes) for name, axes in (given or {}).items()}
    for name, axes in more.items():
        out.setdefault(name, {}).update(axes)
    return out
