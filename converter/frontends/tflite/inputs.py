"""Static shapes for the graph inputs of a TFLite subgraph.

A -1 in an input's `shape_signature` is converted at the stored `shape` size, as LiteRT does
(its `get_input_details()["shape"]`, the size it allocates and runs at), with a note for the
conversion report; `input_dims` (by input name and axis) and `input_shapes` (whole shapes by
input name) set other sizes. Unknown ranks and -1 dims without a stored size must be set;
one `UnresolvedDimensions` error lists all of them with the fixes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from converter.core.errors import InvalidModel, UnresolvedDimensions
from converter.core.fixes import Fix, render_fixes
from converter.core.ir import TensorInfo, ValueInfo
from converter.frontends.free_dims import InputDims, check_input_dims, fixes_for


def declared_shape(t: TensorInfo) -> tuple[int | None, ...] | None:
    """The shape a tensor declares (`shape_signature`, else `shape`) with None for -1
    dimensions; None for an unknown rank."""
    if not t.has_rank and not t.shape:
        return None
    dims = t.shape_signature if t.shape_signature is not None else t.shape
    return tuple(None if d < 0 else int(d) for d in dims)


def _rank(shape: tuple[int | None, ...] | None) -> int | None:
    return None if shape is None else len(shape)


def stored_size_fixes(inputs: Sequence[ValueInfo], stored: Sequence[Fix]) -> tuple[Fix, ...]:
    """The settings to suggest when a graph converted at the stored sizes `stored` is
    invalid (e.g. an audio input [-1, -1] stored as [1, 1], too short for a convolution):
    `input_dims` for each of them, 1 for a probable batch and a placeholder for the others;
    only the others when there are any."""
    fixes = fixes_for([(vi.name, vi.declared_shape) for vi in inputs],
                      {(f.name, f.axis) for f in stored})
    others = tuple(f for f in fixes if f.value is None)
    return others or fixes


def stored_sizes(t: TensorInfo) -> dict[int, int]:
    """The sizes LiteRT runs the dynamic (-1) dimensions of input `t` at: the stored `shape`
    entry of each, where the shape has the signature's rank and the entry is >= 1."""
    want = declared_shape(t)
    if want is None or len(t.shape) != len(want):
        return {}
    return {i: int(t.shape[i]) for i, d in enumerate(want) if d is None and t.shape[i] >= 1}


def resolve_inputs(declared: list[TensorInfo], input_shapes: Mapping[str, Sequence[int]],
                   input_dims: InputDims, label: str) -> tuple[list[ValueInfo], tuple[Fix, ...]]:
    """Static input shapes and the dynamic dimensions given their stored size, as
    `input_dims` fixes with that size (see the module docstring; `default_notes` words
    them for the report)."""
    names = [t.name for t in declared]
    unknown = sorted(set(input_shapes) - set(names))
    if unknown:
        raise InvalidModel(f"shape(s) given for {unknown}, which are not inputs of {label} "
                           f"(inputs: {names})")
    ranks = {t.name: _rank(declared_shape(t)) for t in declared}
    axes = check_input_dims(input_dims, ranks, label, shapes_given=input_shapes)
    out: list[ValueInfo] = []
    unresolved: list[str] = []
    missing: set[tuple[str, int | None]] = set()
    defaults: list[Fix] = []
    for t in declared:
        want = declared_shape(t)
        if t.name in input_shapes:
            shape = tuple(int(d) for d in input_shapes[t.name])
            if any(d < 1 for d in shape):
                raise InvalidModel(f"the shape given for input {t.name!r}, {list(shape)}, has "
                                   "a dimension < 1")
            if want is not None:
                if len(shape) != len(want):
                    raise InvalidModel(f"the shape given for input {t.name!r} has rank "
                                       f"{len(shape)}, the model declares rank {len(want)}")
                for i, (w, g) in enumerate(zip(want, shape, strict=True)):
                    if w is not None and w != g:
                        raise InvalidModel(f"the shape given for input {t.name!r} sets axis "
                                           f"{i} to {g}, which contradicts the model's fixed "
                                           f"dimension {w}")
            out.append(ValueInfo(t.name, t.dtype, shape, want))
            continue
        if want is None:
            unresolved.append(f"{t.name}: unknown rank")
            missing.add((t.name, None))
            out.append(ValueInfo(t.name, t.dtype, None, None))
            continue
        stored = stored_sizes(t)
        dims: list[int] = []
        for i, d in enumerate(want):
            given = axes.get(t.name, {}).get(i)
            if given is not None:
                if d is not None and d != given:
                    raise InvalidModel(f"dimension {t.name}:{i} = {given} contradicts the "
                                       f"model's fixed dimension {d}")
                dims.append(given)
            elif d is not None:
                dims.append(d)
            elif i in stored:
                dims.append(stored[i])
                defaults.append(Fix("input_dims", t.name, axis=i, value=stored[i]))
            else:
                unresolved.append(f"{t.name}[{i}] (dynamic, -1, no stored size)")
                missing.add((t.name, i))
                dims.append(-1)
        out.append(ValueInfo(t.name, t.dtype, tuple(dims), want))
    if unresolved:
        raise UnresolvedDimensions(
            f"{len(unresolved)} input dimension(s) of {label} are not fixed: "
            + ", ".join(unresolved),
            fixes=fixes_for([(t.name, declared_shape(t)) for t in declared], missing))
    return out, tuple(defaults)


def default_notes(defaults: Sequence[Fix]) -> tuple[str, ...]:
    """The report note on the dynamic dimensions converted at their stored size."""
    if not defaults:
        return ()
    used = ", ".join(f"{f.name}[{f.axis}]={f.value}" for f in defaults)
    other = [Fix("input_dims", f.name, axis=f.axis) for f in defaults]
    return (f"dynamic (-1) input dimension(s) converted at the stored size LiteRT runs them "
            f"at: {used}; set other sizes with {render_fixes(other, 'cli')} (command line) "
            f"or {render_fixes(other, 'python')} (Python)",)
