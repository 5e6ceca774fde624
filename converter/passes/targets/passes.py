"""Rewrite rules that make a WebNN graph right on one target and keep it right everywhere else.

`lower(graph, target)` replays a built `MLGraph` through a fresh `MLGraphBuilder` (same
context; constants shared, not copied), operation by operation (`Rewrite.emit`): the operation
is recorded on the new builder, then the rules the target names (`Target.rules`), in registry
order, may replace it with other WebNN operations; the first that does wins (the recorded
operation is then unreachable and left out of the built graph). Operations a rule emits go
through the rules again, so rules compose (a grouped, dilated, padded convTranspose2d is split
by one rule, its filters dilated by another, its padding cropped by a third). The result has
the same inputs, outputs and results (every rule is an exact rewrite, or exact up to
floating-point rounding, on any implementation that follows the spec) plus one note per rule
and kind of rewrite (`Lowered.notes`), which the conversion report carries as warnings. When
no rule applies the original graph comes back unchanged.

A rule is a function `(rw: Rewrite, operation) -> list[MLOperand] | None` registered with
`@rule(name, ops..., why=...)`: `operation` is the new builder's record (`Operation`: spec op
name, args, options with every default filled in, outputs), and the function returns the
replacement outputs (one per output, same descriptors) or None to keep the operation. `rw.b`
is the new builder, `rw.emit(op, args, options)` emits another operation through the rules,
`rw.supports(op, role, data_type)` reads the target's `opSupportLimits()`, `rw.note(...)`
records what was done.

Rules whose `limits` flag is set follow from the limits alone and apply to any target with
limits (a limits file given as the target): they widen data types the target's
`opSupportLimits()` lacks where that is exact.

The rules (see `RULES`; the "Chromium's deviations" table of docs/targets.md lists what each
works around): pool-padding, pool-dilations, convtranspose-groups, convtranspose-dilations,
convtranspose-padding, scatterelements-indices, slice-strides, gatherelements-indices
(behaviour of Chromium's LiteRT backend); widen-types, reduce-l1-unsigned, clamp-minmax,
abs-minmax, dequantize-uint4, float32-compute, dequantize-widen (`rules_casts`),
compose-activation/-logical/-reduce/-normalization/-recurrent/-misc (`rules_compose`: an
operator the target lacks composed from ones it has), rank-limits (`rules_rank`),
reshape-chains (`rules_reshape`: a reshape/transpose chain through a rank the target lacks),
widen-io (`rules_io`: graph inputs/outputs of a type the target lacks carried in a wider one),
layout-nhwc, layout-transpose, layout-reshape, layout-push (`rules_layout`: the preferred
input layout of the limits; registered first, so the other rules see nhwc operations),
narrow-int64 (limits;
narrow-int64 in `rules_narrow` also re-types the whole graph, inputs and outputs included,
where the target cannot carry 64-bit integers at all).
"""

from __future__ import annotations

# lower tries rules in the order they register
from converter.passes.targets import (
           rules_layout,  # first: the others then see the nhwc operations and transposes
)

# isort: split
from converter.passes.targets import rules_gather, rules_quant, rules_spatial, rules_types

# isort: split
from converter.passes.targets import (  # after the exact rules: casts, then compositions
           rules_casts,
           rules_compose,
)

# isort: split
from converter.passes.targets import rules_io, rules_rank, rules_reshape

# isort: split
from converter.passes.targets import rules_narrow  # last: it narrows what the exact rules leave
from converter.passes.targets.rewrite import RULES, Lowered, Rewrite, Rule, lower, rule, rules_for

LIMITS_RULES: tuple[str, ...] = tuple(name for name, r in RULES.items() if r.limits)
"""Names of the rules that follow from a target's limits alone."""

__all__ = ["LIMITS_RULES", "RULES", "Lowered", "Rewrite", "Rule", "lower", "rule", "rules_for",
           "rules_casts", "rules_compose", "rules_gather", "rules_layout", "rules_narrow",
           "rules_io", "rules_quant", "rules_rank", "rules_reshape", "rules_spatial", "rules_types"]
