"""The .webnn writer: identifiers, text layout (checked against hand-written expectations
from the format document), constant annotations, the WGWT blob and the manifest."""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.core.webnn.limits import OP_LIMITS
from converter.core.webnn.operators import operator
from converter.io.serialize.errors import NotRepresentable, WebnnExportError
from converter.io.serialize.lexicon import (
    format_number,
    format_string,
    is_identifier,
    sanitize_identifier,
)
from converter.io.serialize.plan import INLINE_BYTES, plan
from converter.io.serialize.tables import KEYWORDS
from converter.io.serialize.text_writer import to_webnn
from tests.converter.io.export.graphs import FAMILIES, HOSTILE_NAMES

IDENT = re.compile(r"[A-Za-z_/$][A-Za-z0-9_./]*\Z")
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


# -- identifiers and literals ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["x", "input_ids", "a.b/c", "/abs", "$root", "_0", "X9"])
def test_valid_identifiers_are_kept(name: str) -> None:
    assert is_identifier(name)
    assert sanitize_identifier(name) == name


@pytest.mark.parametrize("name", [*HOSTILE_NAMES, "", "9", "-", "$a$b", "a$", "truex", "nullable",
                                  "false_positive", *sorted(KEYWORDS), "v", "f32", "é"])
def test_sanitised_identifiers_fit_the_grammar(name: str) -> None:
    ident = sanitize_identifier(name)
    assert IDENT.match(ident), ident
    assert ident not in KEYWORDS
    assert not ident.startswith(("true", "false", "null"))
    assert is_identifier(ident)
    if name and not is_identifier(name):
        assert ident != name


def test_strings_escape_only_quote_and_backslash() -> None:
    assert format_string('a"b\\c\nd\u2028') == '"a\\"b\\\\c\nd\u2028"'


@pytest.mark.parametrize(("value", "text"), [
    (0, "0"), (-7, "-7"), (2**64 - 1, "18446744073709551615"), (0.5, "0.5"),
    (1e-05, "1e-05"), (1e16, "1e+16"), (-0.0, "-0.0"), (3.0, "3.0"),
    (float("inf"), "1e999"), (float("-inf"), "-1e999"), (np.float32(0.1), "0.10000000149011612"),
    (np.int64(-3), "-3"),
])
def test_numbers_fit_the_grammar(value: float | int, text: str) -> None:
    assert format_number(value) == text
    assert NUMBER.match(text)
    if isinstance(value, float | np.floating):
        assert float(text) == float(value) or (np.isinf(value) and float(text) == value)


def test_nan_and_booleans_are_not_numbers() -> None:
    with pytest.raises(WebnnExportError, match="NaN"):
        format_number(float("nan"))
    with pytest.raises(WebnnExportError, match="boolean"):
        format_number(True)


# -- operator signatures --------------------------------------------------------------------
@pytest.mark.parametrize(("op", "named"), [
    ("softmax", ["axis"]), ("concat", ["axis"]), ("argMin", ["axis"]), ("argMax", ["axis"]),
    ("cumulativeSum", ["axis"]), ("reshape", ["newShape"]), ("expand", ["newShape"]),
    ("tile", ["repetitions"]), ("pad", ["beginningPadding", "endingPadding"]),
    ("slice", ["starts", "sizes"]), ("split", ["splits"]), ("gru", ["steps", "hiddenSize"]),
    ("lstm", ["steps", "hiddenSize"]), ("gruCell", ["hiddenSize"]),
    ("lstmCell", ["hiddenSize"]), ("cast", ["dataType"]),
])
def test_required_literal_parameters_carry_their_idl_names(op: str, named: list[str]) -> None:
    """The format document's table of named required parameters (section 1.6)."""
    sig = operator(op)
    literal = [p.spec_name for p in sig.positional if not p.operand]
    assert literal == named


def test_operand_options_are_exactly_the_documented_keys() -> None:
    keys = set()
    for op in OP_LIMITS:
        sig = operator(op)
        keys |= sig.operand_options
    assert keys == {"scale", "bias", "c", "recurrentBias", "peepholeWeight",
                    "initialHiddenState", "initialCellState"}


# -- text layout ----------------------------------------------------------------------------
def test_small_graph_text_matches_the_format_document(b: MLGraphBuilder) -> None:
    x = b.input("x", [1, 2, 4, 4], "float32")
    w = b.constant(np.arange(2 * 2 * 3 * 3, dtype=np.float32).reshape(2, 2, 3, 3))
    bias = b.constant(np.zeros(2, np.float32))
    conv = b.conv2d(x, w, bias=bias, padding=[1, 1, 1, 1], strides=[2, 2])
    left, right = b.split(conv, 2, axis=1)
    both = b.concat([right, left], 1)
    flat = b.reshape(b.relu(both), [1, 8])
    graph = b.build({"probs": b.softmax(flat, 1), "right": right})
    expected = """webnn_graph "tiny" v1 {
  inputs {
    x: f32[1, 2, 4, 4];
  }
  consts {
    const_0: f32[2, 2, 3, 3] @weights("const_0");
    const_1: f32[2] @scalar(0.0);
  }
  nodes {
    conv2d_0 = conv2d(x, const_0, padding=[1, 1, 1, 1], strides=[2, 2], dilations=[1, 1], groups=1, inputLayout="nchw", filterLayout="oihw", bias=const_1);
    [split_1, right] = split(conv2d_0, splits=2, axis=1);
    concat_2 = concat(right, split_1, axis=1);
    relu_3 = relu(concat_2);
    reshape_4 = reshape(relu_3, newShape=[1, 8]);
    probs = softmax(reshape_4, axis=1);
  }
  outputs {
    probs;
    right;
  }
}
"""
    files = to_webnn(graph, name="tiny")
    assert files.text == expected
    manifest = json.loads(files.manifest)
    assert manifest == {
        "format": "wg-weights-manifest", "version": 1, "endianness": "little",
        "tensors": {"const_0": {"dataType": "float32", "shape": [2, 2, 3, 3], "byteOffset": 8,
                                "byteLength": 144, "layout": "row-major"}}}
    assert files.weights[:8] == b"WGWT" + struct.pack("<I", 1)
    assert files.weights[8:] == struct.pack("<36f", *range(36))


def test_weights_blob_is_contiguous_little_endian_with_absolute_offsets(b: MLGraphBuilder
                                                                        ) -> None:
    arrays = [np.arange(5, dtype=np.float16) * 3, np.arange(3, dtype=np.int64) - 2**40,
              np.arange(7, dtype=np.uint8), np.linspace(-1, 1, 6).astype(np.float32),
              np.array([2**64 - 1, 5, 2**63], np.uint64)]
    x = b.input("x", [1], "float32")
    outs = {f"c{i}": b.identity(b.constant(a)) for i, a in enumerate(arrays)}
    outs["x"] = b.identity(x)
    files = to_webnn(b.build(outs))
    manifest = json.loads(files.manifest)
    entries = sorted(manifest["tensors"].values(), key=lambda e: e["byteOffset"])
    blob_arrays = [a for a in arrays if a.nbytes > INLINE_BYTES]
    assert len(entries) == len(blob_arrays)
    offset = 8
    for entry, arr in zip(entries, blob_arrays, strict=True):
        assert entry["byteOffset"] == offset
        assert entry["byteLength"] == arr.size * arr.itemsize
        assert entry["dataType"] == arr.dtype.name and entry["shape"] == list(arr.shape)
        fmt = {"float16": "e", "int64": "q", "float32": "f", "uint64": "Q"}[arr.dtype.name]
        raw = files.weights[offset:offset + entry["byteLength"]]
        assert struct.unpack(f"<{arr.size}{fmt}", raw) == tuple(arr.tolist())
        offset += entry["byteLength"]
    assert offset == len(files.weights)


@pytest.mark.parametrize(("value", "annotation"), [
    (np.full((100,), 0.25, np.float32), "@scalar(0.25)"),
    (np.full((2, 3), -0.0, np.float32), "@scalar(-0.0)"),
    (np.full((9,), 2**24, np.int32), "@scalar(16777216)"),
    (np.full((9,), 2**24 + 1, np.int32), "@weights("),
    (np.array([0.0, -0.0], np.float32), "@bytes([0, 0, 0, 0, 0, 0, 0, 128])"),
    (np.full((3,), np.nan, np.float32), "@bytes("),
    (np.full((30,), np.inf, np.float16), "@weights("),
    (np.array([1, 2], np.int8), "@bytes([1, 2])"),
    (np.array([258], np.uint16).astype(np.int32), "@scalar(258)"),
    (np.arange(5, dtype=np.int32), "@weights("),
])
def test_constant_annotations(b: MLGraphBuilder, value: np.ndarray, annotation: str) -> None:
    graph = b.build({"y": b.identity(b.constant(value))})
    line = next(line for line in to_webnn(graph).text.splitlines() if "const_0:" in line)
    assert annotation in line


def test_multi_output_operators_use_brackets() -> None:
    text = to_webnn(FAMILIES["recurrent"]().graph).text
    for op in ("gru", "lstm", "lstmCell"):
        assert re.search(rf"^    \[[^\]]+\] = {op}\(", text, re.M), op
    assert re.search(r"^    gru_cell = gruCell\(", text, re.M)


def test_no_positional_literals_and_operand_options_by_name() -> None:
    """Positional arguments are identifiers only (the reference parser drops literals)."""
    for make in FAMILIES.values():
        p = plan(make().graph)
        for operation in p.graph.operations:
            call = p.node_text(operation).split(" = ", 1)[1]
            inner = call[call.index("(") + 1:-1]
            for arg in _split_top_level(inner):
                if "=" not in arg.split("[")[0].split('"')[0]:
                    assert IDENT.match(arg), (operation.op, arg)


def _split_top_level(text: str) -> list[str]:
    out, depth, quoted, cur, escape = [], 0, False, "", False
    for ch in text:
        if quoted:
            cur += ch
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def test_infinite_clamp_bounds_are_dropped_and_pad_infinity_written(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 2], "float32")
    graph = b.build({"c": b.clamp(x, min_value=float("-inf"), max_value=float("inf")),
                     "d": b.clamp(x, min_value=float("inf")),
                     "p": b.pad(x, [1, 1], [0, 0], value=float("-inf"))})
    text = to_webnn(graph).text
    assert "c = clamp(x);" in text
    assert "d = clamp(x, minValue=1e999);" in text
    assert "value=-1e999" in text


def test_nan_option_values_are_rejected(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 2], "float32")
    graph = b.build({"p": b.pad(x, [1, 1], [0, 0], value=float("nan"))})
    with pytest.raises(NotRepresentable, match=r"pad\.value: NaN"):
        to_webnn(graph)
    assert issubclass(NotRepresentable, WebnnExportError)
    assert plan(graph).text_problem() == "pad #0: option value is NaN"


def test_text_problem_is_empty_for_infinities_and_nan_constants(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 2], "float32")
    nan = b.constant(np.full((2, 2), np.nan, np.float32))  # bytes, not a number literal
    graph = b.build({"p": b.pad(b.add(x, nan), [1, 1], [0, 0], value=float("inf"))})
    assert plan(graph).text_problem() == ""


def test_quantized_header_and_graph_name_escaping(b: MLGraphBuilder) -> None:
    x = b.input("x", [4], "float32")
    s = b.constant(np.full((4,), 0.5, np.float32))
    z = b.constant(np.zeros((4,), np.int8))
    graph = b.build({"q": b.quantize_linear(x, s, z)})
    text = to_webnn(graph, name='my "model"\\').text
    assert text.startswith('webnn_graph "my \\"model\\"\\\\" v1 @quantized {\n')


def test_output_repeating_an_operand_gets_an_identity(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "float32")
    y = b.relu(x)
    files = to_webnn(b.build({"a": y, "b b": y}))
    assert "b_b = identity(a);" in files.text
    assert json.loads(files.manifest)["names"] == {"outputs": {"b_b": "b b"}}


def test_identifiers_are_unique_and_valid_for_hostile_names() -> None:
    p = plan(FAMILIES["hostile"]().graph)
    idents = list(p.idents.values()) + [a for a, _ in p.aliases]
    assert len(set(idents)) == len(idents)
    assert all(is_identifier(i) for i in idents)
    assert sorted(p.input_names.values()) == sorted(HOSTILE_NAMES)
    assert sorted(p.output_names.values()) == sorted([*HOSTILE_NAMES, "repeat of first"])
