"""converter.passes.targets.families: every name is a WebNN operator (the serialize tables, written
from the spec's IDL), the families do not overlap, and every reduction takes `axes`."""

from __future__ import annotations

from converter.core.webnn.operators import op_signature
from converter.passes.targets.families import BINARY, REDUCE, UNARY


def test_families_are_spec_operators() -> None:
    names = [*UNARY, *BINARY, *REDUCE]
    assert len(set(names)) == len(names)
    for name in names:
        sig = op_signature(name)
        assert sig is not None, name
    for name in REDUCE:
        sig = op_signature(name)
        assert sig is not None and "axes" in sig.options, name
