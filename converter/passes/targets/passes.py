"""Rewrite rules that make a WebNN graph right on one target and keep it right everywhere else.

`lower(graph, target)` replays a built `MLGraph` through a fresh `MLGraphBuilder` (same
context; constants shared, not copied), operation by operation (`Rewrite.emit`): the operation
is recorded on the new builder, then the rules the target names (`Target.rules`), in the
order `ORDER` declares, may replace it with other WebNN operations; the first that does wins
(the recorded operation is then unreachable and left out of the built graph). Operations a rule emits go
through the rules again, so rules compose (a grouped, dilated, padded convTranspose2d is split
by one rule, its filters dilated by another, its padding cropped by a third). The result has
the same inputs, outputs and results (every rule is an exact rewrite, or exact up to
floating-point rounding, on any implementation that follows the spec) plus one note per rule
and kind of rewrite (`Lowered.notes`), which the conversion report carries as warnings. When
no rule applies the original graph comes back unchanged.

A rule is a function `(rw: Rewrite, operation) -> list[MLOperand] | None` registered with
`@rule(name, ops..., why=...)` (`rewrite.rule`) and placed in `ORDER`: `operation` is the new builder's record (`Operation`: spec op
name, args, options with every default filled in, outputs), and the function returns the
replacement outputs (one per output, same descriptors) or None to keep the operation. `rw.b`
is the new builder, `rw.emit(op, args, options)` emits another operation through the rules,
`rw.supports(op, role, data_type)` reads the target's `opSupportLimits()`, `rw.note(...)`
records what was done.

Rules whose `limits` flag is set follow from the limits alone and apply to any target with
limits (a limits file given as the target): they widen data types the target's
`opSupportLimits()` lacks where that is exact.

The rules (see `ORDER`; the "Chromium's deviations" table of docs/targets.md lists what each
works around): pool-padding, pool-dilations, convtranspose-groups, convtranspose-dilations,
convtranspose-padding, scatterelements-indices, slice-strides, pad-edge,
gatherelements-indices (behaviour of Chromium's LiteRT backend); fold-constant-cast
(`rules_casts`); widen-types, reduce-l1-unsigned, clamp-minmax, abs-minmax, dequantize-nibbles
(`rules_int4`: 4-bit weights kept packed as uint8 bytes where the target has no 4-bit type),
dequantize-uint4, float32-compute, dequantize-widen (`rules_casts`),
compose-activation/-logical/-reduce/-normalization/-recurrent/-misc (`rules_compose`: an
operator the target lacks composed from ones it has), recurrent-speed
(`rules_recurrent_speed`: float32 lstm/gru and cells composed where the target has them but
runs them slower, as measured by benchmarks/browser_recurrent.py), rank-limits (`rules_rank`),
reshape-chains (`rules_reshape`: a reshape/transpose chain through a rank the target lacks),
widen-io (`rules_io`: graph inputs/outputs of a type the target lacks carried in a wider one),
layout-nhwc, layout-transpose, layout-reshape, layout-push (`rules_layout`), layout-flatten
(`rules_flatten`; the preferred input layout of the limits; first in `ORDER`, so the other rules see nhwc operations),
narrow-int64 (limits; in `rules_narrow`, last in `ORDER`: it also re-types the whole graph,
inputs and outputs included, where the target cannot carry 64-bit integers at all).

`target_passes(target)` is what `converter.passes.targets.apply_target` (and `convert(...,
target=...)`) runs (`converter.passes.framework`): `lower` with the target's rules, then the
check against its limits (`check.check_graph`; one note per thing lacked).

Restrictions: every registered rule must be placed in `ORDER` and every name there registered
(importing this module raises ValueError naming the difference otherwise); a module that
defines rules must be imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from converter.core.webnn import MLGraph
from converter.passes.framework import Pass, PassResult
from converter.passes.targets import (
    rules_casts,
    rules_compose,
    rules_flatten,
    rules_gather,
    rules_int4,
    rules_io,
    rules_layout,
    rules_narrow,
    rules_quant,
    rules_rank,
    rules_recurrent_speed,
    rules_reshape,
    rules_spatial,
    rules_types,
)
from converter.passes.targets.check import check_graph, limit_notes
from converter.passes.targets.rewrite import REGISTERED, Lowered, Rule, RuleTarget, replay

RULE_MODULES = (rules_casts, rules_compose, rules_flatten, rules_gather, rules_int4, rules_io,
                rules_layout, rules_narrow, rules_quant, rules_rank, rules_recurrent_speed,
                rules_reshape, rules_spatial, rules_types)
"""The modules defining rules (importing one registers its rules, in no order that matters)."""

ORDER: tuple[str, ...] = (
    # layout first: the other rules then see the nhwc operations and transposes
    "layout-nhwc", "layout-transpose", "layout-reshape", "layout-push", "layout-flatten",
    # the exact rewrites of Chromium's LiteRT behaviour and the exact widenings
    "gatherelements-indices",
    "dequantize-nibbles", "dequantize-uint4", "dequantize-blocks",
    "quantize-unfuse", "quantize-bias", "quantize-gemm-channel", "quantize-integers",
    "pool-padding", "pool-dilations", "convtranspose-groups", "convtranspose-dilations",
    "convtranspose-padding", "scatterelements-indices", "slice-strides", "pad-edge",
    "fold-constant-cast",
    "widen-types", "reduce-l1-unsigned", "clamp-minmax", "abs-minmax",
    # after the exact rules: casts, then compositions
    "float32-compute", "dequantize-widen",
    "compose-activation", "compose-logical", "compose-reduce", "compose-normalization",
    "compose-recurrent", "compose-misc",
    # what the target has but runs slower than the composition (measured)
    "recurrent-speed",
    # graph boundary, ranks, reshape chains
    "widen-io", "rank-limits", "reshape-chains",
    # last: it narrows what the other rules leave
    "narrow-int64",
)
"""Every rule's name, in the order `lower` tries them on an operation (the first that rewrites
it wins)."""


def _ordered() -> Mapping[str, Rule]:
    missing = [name for name in REGISTERED if name not in ORDER]
    unknown = [name for name in ORDER if name not in REGISTERED]
    if missing or unknown or len(set(ORDER)) != len(ORDER):
        raise ValueError(f"ORDER must name every registered rule once: not placed {missing}, "
                         f"not registered {unknown}")
    return MappingProxyType({name: REGISTERED[name] for name in ORDER})


RULES: Mapping[str, Rule] = _ordered()
"""Every rule by name, in `ORDER`."""
LIMITS_RULES: tuple[str, ...] = tuple(name for name, r in RULES.items() if r.limits)
"""Names of the rules that follow from a target's limits alone, in `ORDER`."""


def rules_for(target: RuleTarget, only: Iterable[str] | None = None) -> tuple[Rule, ...]:
    """The target's rules (`Target.rules`; of those, the ones in `only` when given), in
    `ORDER`."""
    wanted = set(target.rules if only is None else only) & set(target.rules)
    return tuple(r for name, r in RULES.items() if name in wanted)


def lower(graph: MLGraph, target: RuleTarget, *, only: Iterable[str] | None = None) -> Lowered:
    """`graph` rewritten for `target` (`converter.passes.targets.load_target`) by its rules in
    `ORDER`; `only` limits the rules to those named. See the module docstring."""
    return replay(graph, target, rules_for(target, only))


def target_passes(target: RuleTarget) -> tuple[Pass, ...]:
    """The passes `apply_target` runs for `target`, in order: its rewrite rules (`lower`), then
    the check against its limits (the graph unchanged; a note per thing lacked,
    `check.limit_notes`). None for a target without rules or limits (`spec`)."""
    if not target.rules and not target.limits:
        return ()

    def rewrite(graph: MLGraph) -> PassResult:
        lowered = lower(graph, target)
        return PassResult(lowered.graph, tuple(lowered.notes))

    def check(graph: MLGraph) -> PassResult:
        return PassResult(graph, tuple(limit_notes(check_graph(graph, target))))

    return (Pass(f"{target.name} rules", rewrite), Pass(f"{target.name} limits", check))


__all__ = ["LIMITS_RULES", "ORDER", "RULES", "RULE_MODULES", "lower", "rules_for",
           "target_passes"]
