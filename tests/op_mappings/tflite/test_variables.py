"""VAR_HANDLE / ASSIGN_VARIABLE / READ_VARIABLE vs LiteRT (one invocation)."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand


def _handle(mb: ModelBuilder, name: str, shared: str, container: str = "") -> int:
    h = mb.tensor(name, [], "resource")
    o = S.VarHandleOptionsT()
    o.sharedName, o.container = shared, container
    mb.op("VAR_HANDLE", [], [h], o)
    return h


def test_assign_then_read_two_variables() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    ha = _handle(mb, "ha", "a")
    hb = _handle(mb, "hb", "b")
    t = mb.tensor("t", [2, 3])
    va = mb.tensor("va", [2, 3])
    vb = mb.tensor("vb", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("MUL", [x, x], [t], S.MulOptionsT())
    mb.op("ASSIGN_VARIABLE", [ha, t], [])
    mb.op("ASSIGN_VARIABLE", [hb, mb.const("c", rand(2, 3, seed=4))], [])
    mb.op("READ_VARIABLE", [ha], [va])
    mb.op("READ_VARIABLE", [hb], [vb])
    mb.op("SUB", [va, vb], [y], S.SubOptionsT())
    result = check(mb.build(), [rand(2, 3)])
    assert result.report.counts()["unsupported"] == 0


def test_read_before_assign_is_an_error() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [3])
    h = _handle(mb, "h", "never")
    v = mb.tensor("v", [3])
    y = mb.output(mb.tensor("y", [3]))
    mb.op("READ_VARIABLE", [h], [v])
    mb.op("ADD", [v, x], [y], S.AddOptionsT())
    with pytest.raises(ConversionFailed, match="'/never' is read before it is assigned"):
        convert_tflite(mb.build())


def test_constant_variable_folds() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [3])
    h = _handle(mb, "h", "k", "box")
    v = mb.tensor("v", [3])
    y = mb.output(mb.tensor("y", [3]))
    mb.op("ASSIGN_VARIABLE", [h, mb.const("c", np.array([1, -2, 3], np.float32))], [])
    mb.op("READ_VARIABLE", [h], [v])
    mb.op("MUL", [v, x], [y], S.MulOptionsT())
    result = check(mb.build(), [rand(3)])
    assert result.report.to_dict()["ops"]["READ_VARIABLE"]["folded"] == ["v"]
