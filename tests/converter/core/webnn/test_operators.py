"""converter.core.webnn.operators: the one table of WebNN operators, and the generic check that
everything keyed by operator registered every operator (reference kernel, torch
implementation, ONNX lowering, limits, family) unless it is on `EXEMPT` with its reason."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

import pytest

from converter.core.webnn.limits import OP_LIMITS
from converter.core.webnn.operators import FAMILIES, OPERATORS, operator
from tests.optional import missing

EXEMPT: Mapping[str, frozenset[str]] = {
    "reference": frozenset(),
    "torch": frozenset(),
    "onnx-lowering": frozenset(),
}
"""Operators a registry genuinely lacks, per registry (each with a comment saying why)."""


def _kernels() -> Mapping[str, object]:
    importlib.import_module("converter.runtimes.reference")
    from converter.runtimes.reference.registry import KERNELS

    return KERNELS


def _impls() -> Mapping[str, object]:
    reason = missing("torch")
    if reason is not None:
        pytest.skip(reason)
    from converter.runtimes.torch import _load_ops

    return _load_ops()


def _lowerings() -> Mapping[str, object]:
    from converter.runtimes.onnxruntime.lowering import LOWERINGS

    return LOWERINGS


REGISTRIES = {"reference": _kernels, "torch": _impls, "onnx-lowering": _lowerings}


def test_the_spec_has_95_operators_with_limits_and_a_family() -> None:
    assert len(OPERATORS) == 95
    assert set(OPERATORS) == set(OP_LIMITS)
    named = [name for names in FAMILIES.values() for name in names]
    assert sorted(named) == sorted(OPERATORS)
    for family, names in FAMILIES.items():
        assert list(names) == sorted(names), family
        assert all(OPERATORS[name].family == family for name in names)
    for op in OPERATORS.values():
        assert op.limits is OP_LIMITS[op.name]


@pytest.mark.parametrize("registry", sorted(REGISTRIES))
def test_every_operator_is_registered(registry: str) -> None:
    registered = REGISTRIES[registry]()
    exempt = EXEMPT[registry]
    assert set(registered) <= set(OPERATORS)
    assert sorted(set(OPERATORS) - set(registered) - exempt) == []
    assert sorted(exempt & set(registered)) == [], "exempt but registered: drop the exemption"


def test_unknown_names_fail() -> None:
    with pytest.raises(ValueError, match="unknown WebNN operator 'gathernd'"):
        operator("gathernd")
    from converter.runtimes.reference.registry import kernel

    with pytest.raises(ValueError, match="unknown WebNN operator 'softMax'"):
        kernel("softMax")


@pytest.mark.parametrize(("name", "method", "outputs"), [
    ("gatherND", "gather_nd", 1), ("isNaN", "is_nan", 1), ("convTranspose2d",
                                                          "conv_transpose2d", 1),
    ("split", "split", None), ("gru", "gru", None), ("lstm", "lstm", None),
    ("lstmCell", "lstm_cell", 2), ("gruCell", "gru_cell", 1),
])
def test_names_methods_and_output_arity(name: str, method: str, outputs: int | None) -> None:
    op = operator(name)
    assert (op.method, op.outputs, op.returns_list) == (method, outputs, outputs != 1)


def test_reductions_take_axes() -> None:
    for name in FAMILIES["reduce"]:
        assert "axes" in operator(name).options, name
