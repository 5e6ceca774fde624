"""Budget accounting of one import (`converter.core.budgets`): `Meter` adds up what the
conversion has spent so far (constant bytes, nodes converted inside unrolled loops) and
checks every amount against the budgets before the work is done; `Unrolling` follows one
loop being unrolled. Handlers reach them through `ImportContext` (`check_constant`,
`unrolling`, `budgets`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.budgets import Budgets, nbytes


def itemsize(dtype: Any) -> int:
    """Bytes per element of a numpy dtype, a WebNN data type name or an int."""
    if isinstance(dtype, int):
        return dtype
    if isinstance(dtype, str) and dtype in ("int4", "uint4"):
        return 1  # stored unpacked, one byte per value
    return int(np.dtype(dtype).itemsize)


class Meter:
    """The budgets of one import and what it has spent: `constant_bytes` (folded values and
    graph constants so far), `derived_bytes` (the part of them made at conversion time:
    folded values and handler-built constants, not the model's own weights; bounded by
    `Budgets.derived_limit` once the model's size is known), `unrolled` (source nodes
    converted inside unrolled loop bodies, nested loops included) and `loop_depth` (loops
    being unrolled now)."""

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets
        self.constant_bytes = 0
        self.derived_bytes = 0
        self.unrolled = 0
        self.loop_depth = 0

    def check_constant(self, size: int, subject: str = "the folded constant would take"
                       ) -> None:
        """`size` bytes of one constant about to be made: over `max_constant_bytes`, or would
        it bring the conversion's constants over `max_total_constant_bytes`?"""
        self.budgets.check("max_constant_bytes", size, subject)
        self._check_total(size)
        self._check_derived(size)

    def _check_total(self, size: int) -> None:
        self.budgets.check("max_total_constant_bytes", self.constant_bytes + size,
                           "the constants of this conversion would take")

    def _check_derived(self, size: int) -> None:
        if self.derived_bytes:
            self.budgets.check_derived(self.derived_bytes + size,
                                       "the constants derived by this conversion would take")

    def add_constant(self, size: int, *, single: bool = True,
                     subject: str = "the folded constant would take") -> None:
        """Count `size` bytes of a constant made now (checked first: `single` also checks
        it as one constant)."""
        if single:
            self.budgets.check("max_constant_bytes", size, subject)
            self._check_derived(size)
        self._check_total(size)
        self.constant_bytes += size
        if single:
            self.derived_bytes += size

    def node(self) -> None:
        """A source node is about to be converted (counted when inside an unrolled loop)."""
        if self.loop_depth:
            self.unrolled += 1
            self.budgets.check("max_unrolled_nodes", self.unrolled,
                               "the unrolled loops would convert")


class Unrolling:
    """One loop being unrolled (a context manager: nodes converted inside it count as
    unrolled): `what` names it ("the Loop"), `trip` is its iteration count when known in
    advance (None for loops that run while a condition holds), `body_nodes` the nodes of
    its body. Construction checks the trip count and iterations x body nodes; call `step()`
    before each iteration."""

    def __init__(self, meter: Meter, what: str, trip: int | None, body_nodes: int,
                 max_trip: int | None = None) -> None:
        self.meter = meter
        self.what = what
        self.trip = trip
        self.body_nodes = max(int(body_nodes), 1)
        self.max_trip = meter.budgets.max_trip_count if max_trip is None else max_trip
        self.done = 0
        self.start = meter.unrolled
        if trip is not None:
            self._check_trip(trip, f"{what} would run")
            self.meter.budgets.check(
                "max_unrolled_nodes", meter.unrolled + trip * self.body_nodes,
                f"unrolling {what} ({trip:,} iterations of a {self.body_nodes:,}-node body) "
                "would bring the unrolled loops to")

    def _check_trip(self, trip: int, subject: str) -> None:
        if trip > self.max_trip:
            from converter.core.budgets import over_budget

            raise over_budget("max_trip_count", trip, self.max_trip, subject)

    def __enter__(self) -> Unrolling:
        self.meter.loop_depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.meter.loop_depth -= 1

    def step(self) -> None:
        """Before each iteration: the trip count so far, and the unrolled nodes the rest of
        the loop would take at the pace of the iterations done."""
        meter = self.meter
        if self.done >= self.max_trip:
            self._check_trip(self.done + 1, f"{self.what} is still running after "
                             f"{self.done:,} iterations: it would run at least")
        if self.done:
            per_iteration = math.ceil((meter.unrolled - self.start) / self.done)
            left = (self.trip - self.done) if self.trip is not None else 1
            meter.budgets.check(
                "max_unrolled_nodes", meter.unrolled + per_iteration * left,
                f"at {per_iteration:,} nodes per iteration, the {left:,} iteration(s) left "
                f"of {self.what} would bring the unrolled loops to")
        self.done += 1


def shape_bytes(shape: Any, dtype: Any) -> int:
    """Bytes of an array of `shape` (or an element count) and `dtype`."""
    return nbytes(shape, itemsize(dtype))
