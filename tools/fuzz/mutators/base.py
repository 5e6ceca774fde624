"""What a mutator sees and may change: the case's files, symlinks and FIFOs."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Mutation:
    """The mutant being built. Structure-aware mutators change the parsed target and may
    add companions (`files`, `links` to the canary, `fifos`); `names` records what was
    done (`kind.mutator(detail)`), the first part being what the summary groups by."""

    files: dict[str, bytes]
    target: str
    links: dict[str, str] = field(default_factory=dict)
    fifos: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def note(self, name: str, detail: str = "") -> None:
        self.names.append(f"{name}({detail})" if detail else name)


# A structure mutator: mutates `obj` in place and returns a detail string, or None when it
# does not apply to this object (nothing was changed).
StructMutator = Callable[[Any, random.Random, Mutation], "str | None"]


def apply_some(obj: Any, rng: random.Random, mut: Mutation, prefix: str,
               table: list[tuple[str, StructMutator]], count: int) -> int:
    """Apply `count` mutators of `table` (chosen at random, skipping those that do not
    apply); returns how many applied."""
    applied = 0
    for _ in range(count):
        for _attempt in range(8):
            name, fn = rng.choice(table)
            detail = fn(obj, rng, mut)
            if detail is not None:
                mut.note(f"{prefix}.{name}", detail)
                applied += 1
                break
    return applied
