"""converter.core.errors: fields, messages, JSON form, aggregation."""

from __future__ import annotations

import json

import pytest

from converter.core.errors import (
    ConversionError,
    ConversionFailed,
    InvalidModel,
    RequiresConstantInput,
    SpecViolation,
    UnresolvedDimensions,
    UnsupportedAttribute,
    UnsupportedOp,
)


@pytest.mark.parametrize("cls, code", [
    (UnsupportedOp, "unsupported_op"), (UnsupportedAttribute, "unsupported_attribute"),
    (RequiresConstantInput, "requires_constant_input"), (InvalidModel, "invalid_model"),
    (SpecViolation, "spec_violation"), (UnresolvedDimensions, "unresolved_dimensions"),
])
def test_reason_codes_and_dict(cls: type[ConversionError], code: str) -> None:
    err = cls("boom", node_name="n1", op_type="Foo", domain="", version=13, hint="do this")
    assert isinstance(err, ConversionError)
    assert err.reason_code == code
    d = err.to_dict()
    assert d == {"reason_code": code, "message": "boom", "node_name": "n1", "op_type": "Foo",
                 "domain": "", "version": 13, "hint": "do this", "fixes": []}
    json.dumps(d)
    assert "Foo 'n1' (opset 13): boom" in str(err)
    assert "hint: do this" in str(err)


def test_default_hint_and_with_node() -> None:
    err = RequiresConstantInput("shape must be constant")
    assert err.hint  # a default hint tells the user what to do
    err.with_node(node_name="r", op_type="Reshape", domain="", version=14)
    err.with_node(node_name="other", op_type="X", domain="d", version=1)  # keeps first values
    assert (err.node_name, err.op_type, err.version) == ("r", "Reshape", 14)


def test_model_level_error_has_no_node() -> None:
    err = InvalidModel("file is truncated")
    assert str(err).startswith("file is truncated")
    assert err.to_dict()["node_name"] is None


def test_conversion_failed_aggregates() -> None:
    errors = [UnsupportedOp("no handler", node_name="a", op_type="Foo", version=13),
              UnsupportedOp("no handler", node_name="b", op_type="Foo", version=13),
              UnsupportedOp("no handler", node_name="c", op_type="Bar", domain="com.x",
                            version=1)]
    agg = ConversionFailed(errors)
    assert agg.reason_code == "conversion_failed"
    assert agg.counts == {"Foo": 2, "com.x::Bar": 1}
    text = str(agg)
    assert text.startswith("3 node(s) could not be converted (Foo x2, com.x::Bar x1)")
    for name in ("'a'", "'b'", "'c'"):
        assert name in text
    d = agg.to_dict()
    assert d["counts"] == {"Foo": 2, "com.x::Bar": 1}
    assert [e["node_name"] for e in d["errors"]] == ["a", "b", "c"]
    json.dumps(d)
