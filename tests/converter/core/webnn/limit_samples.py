"""Protocol for checking that `op_support_limits()` matches what the builder accepts.

Each family test module `tests/converter/core/webnn/ops/test_<family>.py` defines

    SAMPLES: dict[str, Sample]

with one entry per spec operator of the family. `Sample.call(builder, types)` makes one
minimal valid call where the operand playing each non-output role of OP_LIMITS[op] has data
type `types[role]`, and returns the result (operand or list). `Sample.groups` lists role sets
that must share one data type (e.g. `[("a", "b")]` for add); each role not named is its own
group. `tests/converter/core/webnn/test_limits.py` then checks, for every role and every data type,
that the call succeeds exactly when the limits table allows that type, and that every output
data type lies inside the output limits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from converter.core.webnn import MLGraphBuilder


@dataclass(frozen=True)
class Sample:
    call: Callable[[MLGraphBuilder, dict[str, str]], Any]
    groups: Sequence[Sequence[str]] = field(default_factory=tuple)
