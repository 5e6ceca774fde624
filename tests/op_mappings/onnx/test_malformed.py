"""Malformed one-node ONNX models, handler by handler: what the handler reads (constant
inputs, attributes, shapes, ranks) breaks the ONNX specification of the op, so the node is an
`invalid_model` error saying what is wrong, never an internal error (Python or numpy
exceptions from handlers that trusted their inputs: issue 12, found by tools/fuzz and a
handler probe). The importer's schema checks (counts, required attributes, attribute types)
are tested in tests/converter/frontends/onnx/test_malformed.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import invalid, make_model, rand

I64 = np.int64
NAN, INF = float("nan"), float("inf")

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], str]] = [
    # op, inputs, attrs, make_model options, words of the message
    ("Celu", {"x": rand(2, 3)}, {"alpha": INF}, {}, "attribute 'alpha' is inf"),
    ("Clip", {"x": rand(2, 3), "lo": rand(2, 3)}, {}, {"constants": ["lo"]},
     "min (input 1) must hold one value, it has 6"),
    ("Concat", {"a": rand(2, 3), "b": rand(2)}, {"axis": 0}, {"constants": ["a", "b"]},
     "the inputs' shapes [[2, 3], [2]] differ on an axis other than 0"),
    ("ConvTranspose", {"x": rand(1, 1, 3, 3), "w": rand(1, 1, 2, 2)}, {"strides": [1]},
     {"constants": ["w"]}, "strides [1] has 1 entries, 2 expected"),
    ("ConvTranspose", {"x": rand(1, 1, 3, 3), "w": rand(1, 1, 2, 2)}, {"output_shape": [5]},
     {"constants": ["w"]}, "output_shape [5] has fewer than 2 entries"),
    ("CumSum", {"x": rand(2, 3), "axis": np.zeros(0, I64)}, {}, {"constants": ["axis"]},
     "axis (input 1) must hold one value, it has 0"),
    ("EyeLike", {"x": rand(2, 3, 4)}, {}, {}, "input 0 has rank 3, 2 expected"),
    ("EyeLike", {"x": rand(2, 3)}, {"dtype": 100000}, {},
     "attribute 'dtype' 100000 is not an ONNX data type"),
    ("GatherND", {"x": rand(2, 3), "i": np.zeros((2, 1), I64)}, {"batch_dims": 3},
     {"constants": ["i"]}, "attribute 'batch_dims' is 3, it must be in [0, 1]"),
    ("GatherND", {"x": rand(2, 3), "i": np.zeros((2, 3), I64)}, {}, {"constants": ["i"]},
     "indices [2, 3] index 3 axes, data [2, 3] has 2"),
    ("LRN", {"x": rand(1, 3, 4, 4)}, {"size": 0}, {}, "attribute 'size' is 0, it must be >= 1"),
    ("LRN", {"x": rand(1, 3)}, {"size": 3}, {}, "input 0 has rank 2, LRN needs [N, C, D1"),
    ("LayerNormalization", {"x": rand(2, 3), "s": rand(4)}, {}, {"constants": ["s"]},
     "does not broadcast to [3]"),
    ("MaxUnpool", {"x": rand(1, 1, 2, 2), "i": np.zeros((1, 1, 2, 2), I64)},
     {"kernel_shape": [2]}, {}, "kernel_shape [2] has 1 entries, 2 expected"),
    ("MaxUnpool", {"x": rand(1, 1, 2, 2), "i": np.zeros((1, 1, 2), I64)},
     {"kernel_shape": [2, 2]}, {}, "and I the same shape"),
    ("ReverseSequence", {"x": rand(3, 2), "l": np.array([1, 2], I64)},
     {"time_axis": 0, "batch_axis": 0}, {"constants": ["l"]},
     "time_axis and batch_axis are both 0"),
    ("ReverseSequence", {"x": rand(3, 2), "l": np.array([1, 2, 3], I64)},
     {"time_axis": 0, "batch_axis": 1}, {"constants": ["l"]},
     "sequence_lens has shape [3], the batch has 2 entries"),
    ("TopK", {"x": rand(2, 3), "k": np.zeros(0, I64)}, {},
     {"constants": ["k"], "outputs": ["v", "i"]}, "k (input 1) must hold one value, it has 0"),
    ("Dropout", {"x": rand(2, 3), "r": np.array(0.5, np.float32), "t": np.array([0, 0], bool)},
     {}, {"constants": ["r", "t"]}, "training_mode (input 2) must hold one value"),
    ("QuantizeLinear", {"x": rand(2, 3), "s": np.array(0.5, np.float32)},
     {"output_dtype": 100000}, {"opset": 21, "constants": ["s"]},
     "output_dtype 100000 is not an ONNX data type"),
    ("DequantizeLinear", {"x": np.zeros((2, 3), np.uint8), "s": np.array(0.5, np.float32),
                          "z": np.zeros(4, np.uint8)}, {}, {"opset": 13, "constants": ["s", "z"]},
     "'z' has shape [4], which does not fit [1, 1]"),
    ("Squeeze", {"x": rand(1, 3), "a": np.array([INF])}, {}, {"constants": ["a"]},
     "axes must be integers, it holds inf"),
    ("Tile", {"x": rand(2, 3), "r": np.array([2], I64)}, {}, {"constants": ["r"]},
     "repeats [2] has 1 entries, 2 expected"),
    ("Tile", {"x": rand(2, 3), "r": np.array([2] * 40, I64)}, {}, {"constants": ["x", "r"]},
     "has 40 entries, 2 expected"),
    ("Transpose", {"x": rand(2, 3)}, {"perm": [0, 0]}, {},
     "perm [0, 0] is not a permutation of the 2 axes"),
    ("Transpose", {"x": rand(2, 3)}, {"perm": [0, 0]}, {"constants": ["x"]},
     "is not a permutation"),
    ("Trilu", {"x": rand(3)}, {}, {}, "input 0 has rank 1, Trilu needs 2 or more"),
    ("Trilu", {"x": rand(3, 3), "k": np.zeros(0, I64)}, {}, {"constants": ["k"]},
     "k (input 1) must hold one value"),
    ("DepthToSpace", {"x": rand(1, 4, 2, 2)}, {"blocksize": 0}, {},
     "attribute 'blocksize' is 0, it must be >= 1"),
    ("SpaceToDepth", {"x": rand(1, 4, 2, 2)}, {"blocksize": -1}, {},
     "attribute 'blocksize' is -1, it must be >= 1"),
    ("Expand", {"x": rand(2, 3), "s": np.ones(70, I64)}, {}, {"constants": ["s"]}, "Expand:"),
    ("Split", {"x": rand(4, 3)}, {"num_outputs": 0}, {"opset": 18, "outputs": ["a", "b"]},
     "attribute 'num_outputs' is 0, it must be >= 1"),
    ("Split", {"x": rand(4, 3), "s": np.array([5, -1], I64)}, {},
     {"constants": ["s"], "outputs": ["a", "b"]}, "split [5, -1] has an entry below 0"),
    ("RNN", {"x": rand(2, 1, 3, 1), "w": rand(1, 4, 3), "r": rand(1, 4, 4)}, {"hidden_size": 4},
     {"constants": ["w", "r"]}, "RNN X has rank 4, 3 expected"),
    ("LSTM", {"x": rand(2, 1, 3), "w": rand(1, 16, 3), "r": rand(1, 16, 4),
              "_b": None, "_l": None, "h": rand(1, 1, 4, 1)}, {"hidden_size": 4},
     {"constants": ["w", "r"]}, "LSTM initial_h has shape [1, 1, 4, 1], [1, 1, 4] expected"),
    ("GRU", {"x": rand(2, 1, 3), "w": rand(1, 12, 5), "r": rand(1, 12, 4)}, {"hidden_size": 4},
     {"constants": ["w", "r"]}, "GRU W has shape [1, 12, 5], [1, 12, 3] expected"),
]


@pytest.mark.parametrize("op, inputs, attrs, options, words", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_malformed_node(op: str, inputs: dict[str, Any], attrs: dict[str, Any],
                        options: dict[str, Any], words: str) -> None:
    text = invalid(op, inputs, attrs, **options)
    assert text.startswith(f"{op} '{op}_0' (opset ") and words in text, text


def test_celu_needs_a_float_input() -> None:
    """Celu is defined on float tensors (its schema's type constraint)."""
    with pytest.raises(ConversionFailed) as info:
        converter.convert(make_model("Celu", {"x": np.ones((2, 3), np.int32)}))
    (err,) = info.value.errors
    assert err.reason_code == "unsupported_data_type"
    assert "input 0 has data type int32; float16, float32 expected" in str(err)


def test_tree_ensemble_without_its_nodes() -> None:
    """TreeEnsembleRegressor's schema calls every nodes_* attribute optional; the op cannot
    do without them."""
    node = helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml",
                            n_targets=1, name="t")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                              [helper.make_tensor_value_info("y", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19),
                                                    helper.make_opsetid("ai.onnx.ml", 3)],
                              ir_version=10)
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model)
    (err,) = info.value.errors
    assert err.reason_code == "invalid_model"
    assert "required attribute(s) ['nodes_treeids'" in str(err)
