"""`inspect_model()`: what a model file holds, without writing anything: inputs and outputs
as declared (free dimensions by name, "?" for unnamed/dynamic ones), the free dimensions to
fix, and the histogram of op types with their support status.

Status of an op type: "supported" (its nodes convert), "inlined" (ONNX: no handler, but a
model-local function or the op's schema has a function body, which the importer inlines),
"host" (ONNX: its nodes run as host steps after the WebNN graph, docs/host-steps.md: the
trial conversion made them so), "unsupported" (`detail` says why). The status comes from the checks `convert` runs: the
model goes through a trial import (`trial_errors`: the importer over the whole graph, every
free dimension set to its suggested value or 1, nothing built or written) and each node it
refuses marks its op type unsupported with the importer's reason, also where a handler
exists for the op (e.g. a 3-D Conv): when only some nodes of a type fail, the type gets two
rows, the failing nodes counted apart. Without the trial (`check=False`, or when the trial
stops before the nodes: a budget, unresolved dimensions) the status is the handler lookup's.

Restrictions: only the main graph's inputs are described (ONNX If/Loop/Scan bodies and TFLite
subgraphs count in the histogram only); a node that fails only for the dimensions the trial
guessed (a placeholder set to 1) is not held against its op type; nodes that read only
values a failed node produces cannot be checked (their handlers need those values) unless
no handler exists for their op at all.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from converter.core.confine import allowed_roots
from converter.core.errors import ConversionError, ConversionFailed
from converter.core.fixes import Fix
from converter.frontends import get
from converter.frontends.base import ModelInfo, OpUsage, TensorSummary
from converter.frontends.detect import detect_format, model_label

__all__ = ["ModelInfo", "OpUsage", "TensorSummary", "inspect_model", "trial_errors"]

NODE_REASONS = frozenset({"unsupported_op", "unsupported_attribute", "unsupported_data_type",
                          "spec_violation", "internal_error"})
"""Reason codes of node errors that mark an op type unsupported (spec violations and
internal errors only when the trial guessed no dimension)."""
GUESS_SENSITIVE = frozenset({"spec_violation", "internal_error"})


def inspect_model(model: str | os.PathLike[str] | bytes, signature: str | None = None, *,
                  allow_roots: Iterable[str | os.PathLike[str]] | None = None,
                  check: bool = True) -> ModelInfo:
    """Inspect a model (see the module docstring). Raises `InvalidModel` for missing,
    truncated or malformed files and unknown signatures, `ForeignFormat` for a folder (one
    webnn-convert wrote is named so) or a file of another kind. `allow_roots`: folders
    besides the model's own that files it refers to may lie in (`converter.core.confine`; as
    `convert` takes it). `check=False` skips the trial import (status by handler lookup)."""
    with allowed_roots(allow_roots):
        fmt = detect_format(model)
        frontend = get(fmt)
        if isinstance(model, Path):
            model = str(model)
        info = frontend.impl().inspect(model, label=model_label(model), signature=signature)
        if not check:
            return info
        found = trial_errors(model, fmt, info, signature)
        if found is None:
            return info
        errors, guessed, hosted = found
        ops = checked_ops(info.ops, errors, guessed=guessed)
        return replace(info, ops=tuple(
            replace(o, status="host", detail="runs on the host after the WebNN graph: "
                    "docs/host-steps.md")
            if not o.domain and o.op_type in hosted and o.status == "unsupported" else o
            for o in ops))


def trial_options(info: ModelInfo, fmt: str) -> tuple[dict[str, Any], bool]:
    """The `convert()` options of the trial import: every fix `inspect` suggests, with 1
    for placeholders, limited to the options the format takes; and whether any value was
    guessed (a placeholder, or a default size of a dimension other than a first axis)."""
    options: dict[str, Any] = {}
    # sizes the converter takes itself beyond a batch (a TFLite input stored as [1, 1]) are
    # the model's guess as much as a placeholder is
    guessed = any(f.axis not in (None, 0) for f in info.defaults)
    accepted = get(fmt).options
    fixes: Sequence[Fix] = (*info.fixes, *(c.fix for c in info.control_inputs))
    for fix in fixes:
        if fix.option not in accepted:
            continue
        value: Any = fix.value
        if fix.option == "input_shapes":
            guessed |= value is None or any(d is None for d in value)
            value = [1 if d is None else int(d) for d in (value or ())]
            if not value:
                continue
        elif value is None:
            if fix.option == "pin_inputs":
                continue  # no value to pin: the nodes it steers stay unchecked
            guessed, value = True, 1
        if fix.option == "input_dims":
            options.setdefault("input_dims", {}).setdefault(fix.name, {})[fix.axis] = value
        else:
            options.setdefault(fix.option, {})[fix.name] = value
    return options, guessed


def trial_errors(model: str | os.PathLike[str] | bytes, fmt: str, info: ModelInfo, signature: str | None
                 ) -> tuple[list[ConversionError], bool, frozenset[str]] | None:
    """The node errors of a trial import of `model` (see the module docstring), whether it
    guessed dimensions and the op types of the host steps it made; None when the trial
    stopped before the nodes (an error that is not a node's: budgets, unresolved
    dimensions, unreadable external data, ...)."""
    from converter.conversion.pipeline import convert

    options, guessed = trial_options(info, fmt)
    if signature is not None:
        options["signature"] = signature
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the trial's notices are convert's to show
        try:
            result = convert(model, fmt=fmt, **options)
        except ConversionFailed as exc:
            return list(exc.errors), guessed, frozenset()
        except ConversionError:
            return None
        except Exception:  # noqa: BLE001 - a crash is convert's to report, not inspect's
            return None
    host = result.host
    return [], guessed, host.op_types() if host is not None else frozenset()


def _leaves(errors: Sequence[ConversionError]) -> list[ConversionError]:
    """The node errors themselves: an error for a function body or subgraph stands for the
    inner nodes that failed (`ConversionError.inner`)."""
    out: list[ConversionError] = []
    for e in errors:
        out.extend(_leaves(e.inner) if e.inner else [e])
    return out


def checked_ops(ops: Sequence[OpUsage], errors: Sequence[ConversionError], *,
                guessed: bool = False) -> tuple[OpUsage, ...]:
    """`ops` with the failures of the trial import: an op type whose nodes failed becomes
    "unsupported" with the first failure's reason (split in two rows when only some of its
    nodes failed). With `guessed`, failures that guessed dimensions may cause (spec
    violations, internal errors) are left out."""
    failed: dict[tuple[str, str], list[ConversionError]] = {}
    for e in _leaves(errors):
        if e.op_type is None or e.reason_code not in NODE_REASONS:
            continue
        if guessed and e.reason_code in GUESS_SENSITIVE:
            continue
        failed.setdefault((e.op_type, e.domain or ""), []).append(e)
    per_version: Counter[tuple[str, str]] = Counter((o.op_type, o.domain) for o in ops)
    out: list[OpUsage] = []
    for o in ops:
        found = failed.get((o.op_type, o.domain), [])
        if per_version[(o.op_type, o.domain)] > 1:  # rows per version: match it too
            found = [e for e in found if e.version in (None, o.version)]
        if not found or o.status == "unsupported":
            out.append(o)
            continue
        n = min(len(found), o.count)
        first = found[0]
        more = f" and {n - 1} more" if n > 1 else ""
        where = f"node {first.node_name!r}{more}: " if first.node_name else ""
        detail = f"{where}{first.message}"
        if n < o.count:
            out.append(replace(o, count=o.count - n))
        out.append(replace(o, count=n, status="unsupported", detail=detail))
    return tuple(out)
