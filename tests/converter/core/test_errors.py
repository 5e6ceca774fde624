"""converter.core.errors: fields, messages, JSON form, aggregation."""

from __future__ import annotations

import json

import pytest

from converter.core.errors import (
    BudgetExceeded,
    ConversionError,
    ConversionFailed,
    InvalidModel,
    RequiresConstantInput,
    SpecViolation,
    UnresolvedDimensions,
    UnsupportedAttribute,
    UnsupportedOp,
)
from converter.core.fixes import Fix, render_fixes


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


def test_copy_keeps_every_declared_attribute_and_owns_them() -> None:
    """`copy` (the importer copies errors; tblib's pickling breaks `copy.copy`) gives an
    error of the same class whose declared attributes (`state`) are equal, and setting one
    on the copy leaves the original alone."""
    inner = UnsupportedOp("no handler", op_type="Foo")
    err = RequiresConstantInput("shape not constant", node_name="n", op_type="Reshape",
                                version=13, fixes=[Fix("pin_inputs", "x", value=1)])
    err.value_name = "shape"
    err.constant_candidates = ("shape",)
    err.inner = (inner,)
    err.version_label = "version"
    dup = err.copy()
    assert type(dup) is RequiresConstantInput and dup.args == err.args
    assert all(getattr(dup, name) == getattr(err, name) for name in RequiresConstantInput.state)
    assert str(dup) == str(err) and dup.to_dict("cli") == err.to_dict("cli")
    dup.node_name = "other"
    dup.inner = ()
    assert (err.node_name, err.inner) == ("n", (inner,))
    budget = BudgetExceeded("too big", budget="max_run_bytes", flag="--max-run-bytes",
                            amount=10, limit=5)
    assert budget.copy().render("cli") == budget.render("cli")
    agg = ConversionFailed([inner]).copy()
    assert agg.counts == {"Foo": 1} and agg.errors == [inner]


@pytest.mark.parametrize("fix, cli, python", [
    (Fix("free_dims", "batch", value=1), "--dim batch=1", 'free_dims={"batch": 1}'),
    (Fix("free_dims", "x:0", value=2), "--free-dim x:0=2", 'free_dims={"x:0": 2}'),
    (Fix("input_dims", "x", axis=0), "--dim x:0=N", 'input_dims={"x": {0: N}}'),
    (Fix("input_shapes", "x", value=(1, None)), "--shape x=1,D2",
     'input_shapes={"x": [1, D2]}'),
    (Fix("pin_inputs", "sr", value=16000), "--pin sr=16000", 'pin_inputs={"sr": 16000}'),
    (Fix("pin_inputs", "a b", value=[1, 2]), "--pin 'a b=1,2'", 'pin_inputs={"a b": [1, 2]}'),
])
def test_a_fix_is_spelled_for_each_interface(fix: Fix, cli: str, python: str) -> None:
    assert render_fixes([fix], "cli") == fix.cli() == cli
    assert render_fixes([fix], "python") == python
    assert fix.to_dict()["cli"] == cli and fix.to_dict()["python"] == python


def test_conversion_failed_says_where_every_error_is_listed() -> None:
    agg = ConversionFailed([UnsupportedOp("no handler", node_name=f"n{i}", op_type="Foo")
                            for i in range(25)])
    assert "(ConversionFailed.errors lists every one)" in agg.render("python")
    assert "(--json lists every one)" in agg.render("cli")
