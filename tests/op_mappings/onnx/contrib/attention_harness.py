"""Test helpers for the attention-family mappings: one-node models (com.microsoft or
standard domain) converted and compared with onnxruntime, returning the max abs error of
each output; malformed nodes must fail with one one-line error naming the node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import assert_close, node_model, run_ort

MS = "com.microsoft"


def check_ms(op: str, inputs: Sequence[tuple[str, np.ndarray | None]],
             attrs: Mapping[str, Any], outputs: Sequence[str] = ("y",),
             constants: Sequence[str] = (), rtol: float = 1e-4, atol: float = 1e-5,
             domain: str = MS, opset: int = 17) -> dict[str, float]:
    """Convert and run a one-node model (com.microsoft unless `domain` says otherwise),
    compare every output with onnxruntime; returns the max abs error per output."""
    model = node_model(op, inputs, attrs, outputs=outputs, constants=constants,
                       domain=domain, opset=opset)
    feeds = {n: np.asarray(v) for n, v in inputs if v is not None and n not in constants}
    expected = run_ort(model, feeds)
    got = converter.convert(model, target="spec").run(feeds)
    assert list(got) == [o for o in outputs if o]
    errors = {}
    for name, value in got.items():
        assert_close(value, expected[name], rtol, atol, f"{op} output {name}")
        errors[name] = float(np.max(np.abs(value.astype(np.float64) - expected[name])))
    print(f"max abs error {op}: {errors}")  # shown with pytest -s
    return errors


def conversion_error(op: str, inputs: Sequence[tuple[str, np.ndarray | None]],
                     attrs: Mapping[str, Any], outputs: Sequence[str] = ("y",),
                     domain: str = MS, opset: int = 17, constants: Sequence[str] = ()) -> str:
    """The single node error of a conversion that must fail, checked to be one line naming
    the node."""
    model = node_model(op, inputs, attrs, outputs=outputs, domain=domain, opset=opset,
                       constants=constants)
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model, target="spec")
    (err,) = info.value.errors
    text = str(err)
    assert "\n" not in text and err.op_type == op and err.reason_code != "internal_error", text
    return text
