"""ONNX MelWeightMatrix vs onnxruntime (constant inputs: the node folds to a constant):
several bin counts, DFT lengths, sample rates and edge frequencies (including narrow bands
whose triangles collapse to one bin), output_datatype float16; graph inputs pinned at
conversion; the errors for inputs computed at run time and for edges above Nyquist."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import check_node, node_model

NAMES = ("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz")


def _inputs(n_mel: int, dft: int, rate: int, lo: float, hi: float
            ) -> list[tuple[str, np.ndarray]]:
    values = [np.array(n_mel, np.int64), np.array(dft, np.int64), np.array(rate, np.int64),
              np.array(lo, np.float32), np.array(hi, np.float32)]
    return list(zip(NAMES, values, strict=True))


@pytest.mark.parametrize("params", [(8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 7600.0),
                                    (40, 512, 16000, 125.0, 3800.0),
                                    (12, 32, 22050, 300.0, 900.0),   # collapsed triangles
                                    (3, 10, 1000, 0.0, 499.0), (1, 8, 8000, 100.0, 3000.0)],
                         ids=str)
def test_mel_weight_matrix(params: tuple) -> None:
    result = check_node("MelWeightMatrix", _inputs(*params), opset=17, constants=NAMES,
                        rtol=1e-6, atol=1e-7)
    assert result.report.by_op()["MelWeightMatrix"]["folded"]


def test_mel_weight_matrix_float16_output() -> None:
    """onnxruntime has no float16 kernel: the oracle is the ONNX reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    model = node_model("MelWeightMatrix", _inputs(16, 128, 16000, 50.0, 6000.0),
                       {"output_datatype": 10}, opset=17, constants=NAMES)
    expected = ReferenceEvaluator(model).run(None, {})[0]
    got = converter.convert(model).run({})["y"]
    assert got.dtype == expected.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=1e-3,
                               atol=1e-3)


def test_mel_weight_matrix_pinned_graph_inputs() -> None:
    inputs = _inputs(8, 16, 8192, 0.0, 4096.0)
    model = node_model("MelWeightMatrix", inputs, opset=17)
    from tests.op_mappings.onnx.harness import run_ort

    feeds = dict(inputs)
    expected = run_ort(model, feeds)["y"]
    with pytest.raises(ConversionFailed, match="must be known at conversion time"):
        converter.convert(model)
    got = converter.convert(model, pin_inputs=feeds).run({})["y"]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_mel_weight_matrix_above_nyquist_is_rejected() -> None:
    model = node_model("MelWeightMatrix", _inputs(8, 16, 8000, 0.0, 7000.0), opset=17,
                       constants=NAMES)
    with pytest.raises(ConversionFailed, match="fall outside the 9 spectrogram bins"):
        converter.convert(model)
