"""The .webnn reader: round trips of every WPT graph and of hand-built graphs covering every
operator family (outputs bit-identical to the original graph), the reader's leniency on
hand-written files (checked against numpy), and clear errors on malformed or hostile
files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraph
from converter.core.webnn.limits import OP_LIMITS
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.loader import load_webnn, loads
from converter.io.serialize.tables import MAX_NESTING
from converter.io.serialize.text_parser import parse
from converter.io.serialize.text_writer import to_webnn, write_webnn
from converter.validate.conformance import case_array
from tests.converter.io.export.graphs import (
    FAMILIES,
    HOSTILE_NAMES,
    MAX_WPT_ELEMENTS,
    assert_same_outputs,
    wpt_example,
    wpt_size,
)
from tests.timing import cpu_seconds
from tests.wpt import expected_failure, load_cases, mismatches

CASES = [c for c in load_cases()
         if not c.case.get("lossy_nonfinite") and expected_failure(c, "reference") is None]
WPT_FILES = sorted({c.file for c in CASES})


def _roundtrip(graph: MLGraph, context=None) -> MLGraph:
    files = to_webnn(graph)
    return loads(files.text, files.weights, files.manifest, context=context or graph.context)


# -- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("wpt_file", WPT_FILES)
def test_wpt_graphs_round_trip(wpt_file: str) -> None:
    """Every WPT case of the file (up to MAX_WPT_ELEMENTS input elements): the reloaded graph
    computes exactly what the original computes, and matches the WPT expectations."""
    done = 0
    for case in (c for c in CASES if c.file == wpt_file):
        if wpt_size(case) > MAX_WPT_ELEMENTS:
            continue
        try:
            ex = wpt_example(case)
        except (TypeError, ValueError):
            continue  # cases whose inputs cannot be built (e.g. NaN given as a string)
        loaded = _roundtrip(ex.graph)
        assert loaded.input_descriptors == ex.graph.input_descriptors
        assert loaded.output_descriptors == ex.graph.output_descriptors
        original = ex.context.compute(ex.graph, ex.feeds)
        again = ex.context.compute(loaded, ex.feeds)
        assert_same_outputs(original, again)
        for name, spec in case.case["graph"]["expectedOutputs"].items():
            expected = case_array(spec["data"], spec["descriptor"])
            assert not mismatches(again[name], expected, case.case.get("tolerance")), case.id
        done += 1
    assert done > 0


def test_round_trips_cover_every_operator() -> None:
    ops = {o.op for make in FAMILIES.values() for o in make().graph.operations}
    assert ops == set(OP_LIMITS), sorted(set(OP_LIMITS) - ops)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_graphs_round_trip(family: str) -> None:
    ex = FAMILIES[family]()
    loaded = _roundtrip(ex.graph)
    assert list(loaded.inputs) == list(ex.graph.inputs) or sorted(loaded.inputs) == sorted(
        ex.graph.inputs)
    assert loaded.input_descriptors == ex.graph.input_descriptors
    assert list(loaded.outputs) == list(ex.graph.outputs)
    assert loaded.output_descriptors == ex.graph.output_descriptors
    ops = [o.op for o in ex.graph.operations]
    loaded_ops = [o.op for o in loaded.operations]
    extra = len(loaded_ops) - len(ops)  # identity nodes for outputs that repeat an operand
    assert sorted(loaded_ops) == sorted(ops + ["identity"] * extra)
    for a, b in zip(ex.graph.operations, loaded.operations, strict=False):
        if a.op == b.op:
            assert _plain_options(a.options) == _plain_options(b.options), a.op
    assert_same_outputs(ex.context.compute(ex.graph, ex.feeds),
                        ex.context.compute(loaded, ex.feeds))


def _plain_options(options: dict) -> dict:
    """Options without operands and without infinite bounds (the writer drops infinite
    clamp bounds: no bound is the same operation)."""
    return {k: v for k, v in options.items()
            if not hasattr(v, "descriptor") and not (isinstance(v, float) and np.isinf(v))}


def test_files_on_disk_round_trip_hostile_names(tmp_path: Path) -> None:
    ex = FAMILIES["hostile"]()
    paths = write_webnn(ex.graph, tmp_path, "hostile")
    assert [p.name for p in paths] == ["hostile.webnn", "hostile.weights",
                                       "hostile.manifest.json"]
    loaded = load_webnn(tmp_path / "hostile.webnn")
    assert sorted(loaded.inputs) == sorted(HOSTILE_NAMES)
    assert list(loaded.outputs) == [*HOSTILE_NAMES, "repeat of first"]
    assert_same_outputs(ex.context.compute(ex.graph, ex.feeds),
                        loaded.context.compute(loaded, ex.feeds))
    assert [o.options.get("label") for o in loaded.operations[:len(HOSTILE_NAMES)]] == \
        HOSTILE_NAMES


def test_without_manifest_names_are_the_identifiers(tmp_path: Path) -> None:
    ex = FAMILIES["hostile"]()
    write_webnn(ex.graph, tmp_path)
    (tmp_path / "model.manifest.json").unlink()
    loaded = load_webnn(tmp_path / "model.webnn")
    assert "x_0" in loaded.inputs and "x:0" not in loaded.inputs


# -- hand-written files: leniency, checked against numpy ------------------------------------
def _blob(*arrays: np.ndarray) -> tuple[bytes, dict]:
    data = b"WGWT" + struct.pack("<I", 1)
    tensors = {}
    for i, arr in enumerate(arrays):
        tensors[f"t{i}"] = {"dataType": arr.dtype.name, "shape": list(arr.shape),
                            "byteOffset": len(data), "byteLength": arr.nbytes}
        data += arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    return data, {"format": "wg-weights-manifest", "version": 1, "endianness": "little",
                  "tensors": tensors}


def test_lenient_hand_written_file() -> None:
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    blob, manifest = _blob(w)
    manifest["tensors"]["w"] = manifest["tensors"].pop("t0")
    text = """# comment before the header
webnn_graph "hand" v 2 {
  outputs { y, s ; idx }   # comma and semicolon separated
  nodes {
    [y] = add(x, w);                          # one-element bracket list
    s = relu(y);
    c = cast(s, to="i32");                    # 'to' alias and a short dtype name
    idx = argMax(c, axis=1, outputDataType="i64");
  }
  consts { w: f32[3, 4]; }                    # no annotation: @weights("w")
  inputs { x: f32[dyn("batch", 8), 4]; }
}
"""
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    graph = loads(text, blob, json.dumps(manifest), free_dims={"batch": 3})
    assert graph.input_descriptors["x"].shape == (3, 4)
    out = graph.context.compute(graph, {"x": x})
    y = x + w
    np.testing.assert_array_equal(out["y"], y)
    np.testing.assert_array_equal(out["s"], np.maximum(y, 0))
    assert out["idx"].dtype == np.int64
    np.testing.assert_array_equal(out["idx"], np.argmax(np.maximum(y, 0).astype(np.int32), 1))


def test_dynamic_dimension_defaults_to_its_maximum_and_alias_reads_as_identity() -> None:
    text = """webnn_graph "g" v2 {
  inputs { x: u8[dyn("n", 5)]; }
  nodes { y = x; z = logicalNot(y); }
  outputs { y; z; }
}"""
    graph = loads(text)
    assert graph.input_descriptors["x"].shape == (5,)
    out = graph.context.compute(graph, {"x": np.array([0, 1, 2, 0, 1], np.uint8)})
    np.testing.assert_array_equal(out["y"], [0, 1, 2, 0, 1])
    np.testing.assert_array_equal(out["z"], [1, 0, 0, 1, 0])


def test_scalar_and_bytes_annotations_and_last_annotation_wins() -> None:
    text = """webnn_graph "g" v1 {
  consts {
    a: f16[2, 2] @scalar(0.1);
    b: i64[2] @bytes([255, 255, 255, 255, 255, 255, 255, 255, 1, 0, 0, 0, 0, 0, 0, 128]);
    c: f32[] @weights("nope") @scalar(-3);
  }
  nodes { ya = identity(a); yb = identity(b); yc = identity(c); }
  outputs { ya; yb; yc; }
}"""
    graph = loads(text)
    out = graph.context.compute(graph, {})
    np.testing.assert_array_equal(out["ya"], np.full((2, 2), np.float16(np.float32(0.1))))
    np.testing.assert_array_equal(out["yb"], np.array([-1, -(2**63) + 1], np.int64))
    assert out["yc"].shape == () and out["yc"] == -3


def test_manifest_keys_are_retried_sanitised_and_relative_offsets_warn() -> None:
    w = np.array([1.5, -2.5, 4.0, 8.0, 16.0], np.float32)
    blob = b"WGWT" + struct.pack("<I", 1) + w.tobytes()
    manifest = {"tensors": {"enc__w_0": {"byteOffset": 0, "byteLength": 20}}}
    text = 'webnn_graph "g" v1 { consts { w: f32[5] @weights("enc::w.0"); } ' \
           'nodes { y = neg(w); } outputs { y; } }'
    with pytest.warns(UserWarning, match="relative"):
        graph = loads(text, blob, json.dumps(manifest))
    np.testing.assert_array_equal(graph.context.compute(graph, {})["y"], -w)


def test_outputs_naming_inputs_or_constants_are_wrapped() -> None:
    text = 'webnn_graph "g" v1 { inputs { x: f32[2]; } consts { k: i32[1] @scalar(4); } ' \
           'outputs { x; k; } }'
    graph = loads(text)
    out = graph.context.compute(graph, {"x": np.array([1, 2], np.float32)})
    np.testing.assert_array_equal(out["x"], [1, 2])
    np.testing.assert_array_equal(out["k"], [4])


def test_reader_uses_the_given_context() -> None:
    ctx = ML().create_context()
    graph = loads('webnn_graph "g" v1 { inputs { x: f32[1]; } nodes { y = abs(x); } '
                  'outputs { y; } }', context=ctx)
    assert graph.context is ctx


# -- malformed files ------------------------------------------------------------------------
HEAD = 'webnn_graph "g" v1 {\n'
GOOD_INPUT = "  inputs { x: f32[2, 3]; }\n"

MALFORMED = [
    ("nothing", "", "expected 'webnn_graph'", 1),
    ("version", 'webnn_graph "g" v3 {}', "unsupported format version", 1),
    ("no brace", 'webnn_graph "g" v1\ninputs', "expected '{'", 2),
    ("bad section", HEAD + "  weights { }\n}", "expected a section", 2),
    ("dtype", HEAD + "  inputs { x: f64[2]; }\n}", "unknown data type 'f64'", 2),
    ("long dtype", HEAD + "  inputs { x: float32[2]; }\n}", "unknown data type", 2),
    ("unterminated", HEAD + '  nodes { y = relu(x, label="abc\n\n', "unterminated string", 2),
    ("escape", HEAD + GOOD_INPUT + '  nodes { y = relu(x, label="a\\nb"); }\n}',
     r"invalid escape '\\\\n'", 3),
    ("number 5.", HEAD + GOOD_INPUT + "  nodes { y = elu(x, alpha=5.); }\n}",
     "malformed number", 3),
    ("number .5", HEAD + GOOD_INPUT + "  nodes { y = elu(x, alpha=.5); }\n}",
     "unexpected character '.'", 3),
    ("number +1", HEAD + GOOD_INPUT + "  nodes { y = elu(x, alpha=+1); }\n}",
     "unexpected character '\\+'", 3),
    ("number 1e", HEAD + GOOD_INPUT + "  nodes { y = elu(x, alpha=1e); }\n}",
     "malformed number", 3),
    ("inf", HEAD + GOOD_INPUT + "  nodes { y = elu(x, alpha=inf); }\n  outputs { y; }\n}",
     "elu: alpha must be a number", 3),
    ("character", HEAD + GOOD_INPUT + "  nodes { y = relu(x) % 2; }\n}",
     "unexpected character '%'", 3),
    ("annotation", HEAD + "  consts { w: f32[1] @foo(1); }\n}", "unknown annotation '@foo'", 2),
    ("unknown op", HEAD + GOOD_INPUT + "  nodes { y = frobnicate(x); }\n  outputs { y; }\n}",
     "unknown operator 'frobnicate'", 3),
    ("unknown option", HEAD + GOOD_INPUT +
     "  nodes { y = relu(x, bogus=1); }\n  outputs { y; }\n}", "relu: unknown option 'bogus'", 3),
    ("forward ref", HEAD + GOOD_INPUT +
     "  nodes {\n    y = relu(z);\n    z = relu(x);\n  }\n  outputs { y; }\n}",
     "'z' is not declared before this use", 4),
    ("duplicate", HEAD + GOOD_INPUT + "  nodes {\n    x = relu(x);\n  }\n  outputs { x; }\n}",
     "'x' is already declared", 4),
    ("positional literal", HEAD + GOOD_INPUT +
     "  nodes { y = softmax(x, 1); }\n  outputs { y; }\n}", "positional argument 1 is a literal",
     3),
    ("missing param", HEAD + GOOD_INPUT + "  nodes {\n y = reshape(x);\n }\n outputs { y; }\n}",
     "reshape: missing argument 'newShape'", 4),
    ("too many operands", HEAD + GOOD_INPUT + "  nodes { y = relu(x, x); }\n outputs { y; }\n}",
     "too many operand arguments", 3),
    ("output count", HEAD + GOOD_INPUT +
     "  nodes { [a, b] = relu(x); }\n  outputs { a; }\n}", "relu returns 1 output", 3),
    ("literal node", HEAD + GOOD_INPUT + "  nodes { y = 3; }\n}", "not a literal", 3),
    ("dyn const", HEAD + '  consts { w: f32[dyn("n", 3)]; }\n}', "only allowed in inputs", 2),
    ("byte value", HEAD + "  consts { w: u8[1] @bytes([256]); }\n}", "not a byte", 2),
    ("byte count", HEAD + "  consts { w: f32[1] @bytes([1, 2]); }\n  outputs { w; }\n}",
     "@bytes has 2 bytes", 2),
    ("trailing", HEAD + GOOD_INPUT + "  nodes { y = relu(x); }\n  outputs { y; }\n}\n}",
     "expected the end of the file", 6),
    ("no outputs", HEAD + GOOD_INPUT + "  nodes { y = relu(x); }\n}", "no outputs", None),
    ("undeclared output", HEAD + GOOD_INPUT + "  outputs {\n    q;\n  }\n}",
     "output 'q' is not declared", 4),
    ("duplicate output", HEAD + GOOD_INPUT + "  nodes { y = relu(x); }\n  outputs { y; y; }\n}",
     "listed twice", 4),
    ("int4", HEAD + "  inputs { x: i4[2]; }\n  outputs { x; }\n}", "int4 is not supported", 2),
    ("builder rule", HEAD + GOOD_INPUT +
     "  consts { w: f32[1, 1, 1] @scalar(1); }\n  nodes {\n    y = conv2d(x, w);\n  }\n"
     "  outputs { y; }\n}", "conv2d: ", 5),
    ("huge dim", HEAD + "  consts { w: f32[99999999999]; }\n  outputs { w; }\n}",
     "exceeds 2147483647", 2),
    ("no weights", HEAD + "  consts { w: f32[4]; }\n  outputs { w; }\n}",
     "needs a weights file", 2),
    ("twice named", HEAD + GOOD_INPUT +
     "  nodes { y = elu(x, alpha=1.0, alpha=2.0); }\n  outputs { y; }\n}", "given twice", 3),
    ("operand option", HEAD + GOOD_INPUT +
     "  nodes { y = instanceNormalization(x, scale=nothing); }\n  outputs { y; }\n}",
     "'nothing' is not declared", 3),
]


@pytest.mark.parametrize(("text", "message", "line"), [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_text_is_rejected_with_file_and_line(text: str, message: str,
                                                       line: int | None) -> None:
    with pytest.raises(WebnnFormatError, match=message) as info:
        loads(text, path="bad.webnn")
    assert info.value.path == "bad.webnn"
    assert info.value.line == line
    assert str(info.value).startswith("bad.webnn:" + (f"{line}:" if line else ""))


def test_deep_nesting_is_bounded() -> None:
    depth = 100_000
    text = HEAD + GOOD_INPUT + "  nodes { y = relu(x, label=" + "[" * depth + "]" * depth + \
        "); }\n}"
    with pytest.raises(WebnnFormatError, match=f"nested deeper than {MAX_NESTING}"):
        parse(text, "deep.webnn")


def test_pathological_strings_parse_in_linear_time() -> None:
    body = '\\"' * 200_000
    text = HEAD + GOOD_INPUT + f'  nodes {{ y = relu(x, label="{body}"); }}\n  outputs {{ y; }}\n}}'
    with cpu_seconds() as spent:
        graph = loads(text)
    assert spent.seconds < 5  # CPU time: a quadratic scan takes minutes
    assert graph.operations[0].options["label"] == '"' * 200_000


def test_an_early_error_stops_the_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hostile text (a fuzzed graph repeated 20,000 times: 50 MB) failing on its first
    line is refused without tokenizing the rest: the parser reads tokens as it goes."""
    import converter.io.serialize.text_parser as text_parser

    read: list[int] = []
    real = text_parser.iter_tokens

    def counted(src):  # type: ignore[no-untyped-def]
        for token in real(src):
            read.append(token.pos)
            yield token

    monkeypatch.setattr(text_parser, "iter_tokens", counted)
    text = 'webnn_graph "g" v1 {\r  inputs { x: f32[-1]; }\r}\r' * 200_000
    with pytest.raises(WebnnFormatError, match="expected a dimension") as info:
        parse(text, "repeated.webnn")
    assert (info.value.line, info.value.column) == (1, 40)
    assert len(read) < 20


def test_scalar_expansion_is_bounded() -> None:
    text = HEAD + "  consts { w: f32[1024, 1024] @scalar(1); }\n  nodes { y = relu(w); }\n" \
        "  outputs { y; }\n}"
    with pytest.raises(WebnnFormatError, match="max_scalar_bytes"):
        loads(text, max_scalar_bytes=1 << 20)
    assert loads(text, max_scalar_bytes=4 << 20).constants[0].shape == (1024, 1024)


def test_free_dims_are_checked() -> None:
    text = HEAD + '  inputs { x: f32[dyn("n", 4)]; }\n  nodes { y = relu(x); }\n' \
        "  outputs { y; }\n}"
    with pytest.raises(WebnnFormatError, match=r"'n' = 5 must be an integer in \[1, 4\]"):
        loads(text, free_dims={"n": 5})
    with pytest.raises(WebnnFormatError, match="unknown dynamic dimensions"):
        loads(text, free_dims={"m": 2})


# -- malformed weights and manifests --------------------------------------------------------
def _weights_case() -> tuple[str, bytes, dict]:
    w = np.arange(6, dtype=np.float32)
    blob, manifest = _blob(w)
    text = HEAD + '  consts { w: f32[2, 3] @weights("t0"); }\n  nodes { y = neg(w); }\n' \
        "  outputs { y; }\n}"
    manifest["tensors"]["t0"]["shape"] = [2, 3]
    return text, blob, manifest


def test_valid_weights_case_loads() -> None:
    text, blob, manifest = _weights_case()
    graph = loads(text, blob, json.dumps(manifest))
    np.testing.assert_array_equal(graph.context.compute(graph, {})["y"],
                                  -np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize(("change", "message"), [
    (lambda b, m: (b[:-1], m), r"bytes \[8, 32\) are outside the data area \[8, 31\)"),
    (lambda b, m: (b[:5], m), "shorter than its 8-byte header"),
    (lambda b, m: (b"WGWX" + b[4:], m), "not a WGWT weights file"),
    (lambda b, m: (b[:4] + struct.pack("<I", 2) + b[8:], m), "unsupported weights version 2"),
    (lambda b, m: (b, {**m, "format": "other"}), "format is 'other'"),
    (lambda b, m: (b, {**m, "version": 3}), "unsupported manifest version"),
    (lambda b, m: (b, {**m, "endianness": "big"}), "unsupported endianness"),
    (lambda b, m: (b, {**m, "tensors": []}), "'tensors' must be an object"),
    (lambda b, m: (b, {**m, "tensors": {}}), "weights key 't0' is not in the manifest"),
    (lambda b, m: (b, _entry(m, byteOffset=-8)), "non-negative integers"),
    (lambda b, m: (b, _entry(m, byteOffset=True)), "non-negative integers"),
    (lambda b, m: (b, _entry(m, byteOffset=2**40)), "outside the data area"),
    (lambda b, m: (b, _entry(m, byteLength=20)), "byteLength 20 differs from 24"),
    (lambda b, m: (b, _entry(m, dataType="int32")), "the manifest says int32"),
    (lambda b, m: (b, _entry(m, shape=[3, 2])), r"shape \[3, 2\] differs"),
    (lambda b, m: (b, _entry(m, shape="2x3")), "shape must be a list"),
    (lambda b, m: (b, _entry(m, layout="column-major")), "unsupported layout"),
    (lambda b, m: (b, {**m, "names": {"inputs": {"zz": "a"}}}), "not a declared input"),
    (lambda b, m: (b, {**m, "names": {"outputs": {"y": ""}}}), "non-empty strings"),
])
def test_malformed_weights_and_manifests(change, message: str) -> None:
    text, blob, manifest = _weights_case()
    blob, manifest = change(blob, manifest)
    with pytest.raises(WebnnFormatError, match=message):
        loads(text, blob, json.dumps(manifest), path="m.webnn")


def _entry(manifest: dict, **fields) -> dict:
    entry = {**manifest["tensors"]["t0"], **fields}
    return {**manifest, "tensors": {"t0": entry}}


def test_invalid_manifest_json_reports_its_line(tmp_path: Path) -> None:
    text, blob, _ = _weights_case()
    (tmp_path / "g.webnn").write_text(text)
    (tmp_path / "g.weights").write_bytes(blob)
    (tmp_path / "g.manifest.json").write_text('{\n  "tensors": {\n    "t0": ,\n  }\n}')
    with pytest.raises(WebnnFormatError, match="invalid JSON") as info:
        load_webnn(tmp_path / "g.webnn")
    assert info.value.path.endswith("g.manifest.json") and info.value.line == 3


def test_truncated_weights_file_on_disk(tmp_path: Path) -> None:
    ex = FAMILIES["constants"]()
    write_webnn(ex.graph, tmp_path)
    blob = (tmp_path / "model.weights").read_bytes()
    (tmp_path / "model.weights").write_bytes(blob[:len(blob) // 2])
    with pytest.raises(WebnnFormatError, match="outside the data area") as info:
        load_webnn(tmp_path / "model.webnn")
    assert "model.weights" in str(info.value)


def test_truncated_text_file_on_disk(tmp_path: Path) -> None:
    ex = FAMILIES["conv"]()
    write_webnn(ex.graph, tmp_path)
    text = (tmp_path / "model.webnn").read_text()
    cut = text[: text.index("nodes {") + 200]
    (tmp_path / "model.webnn").write_text(cut)
    with pytest.raises(WebnnFormatError) as info:
        load_webnn(tmp_path / "model.webnn")
    assert info.value.path.endswith("model.webnn") and info.value.line is not None


def test_non_utf8_text_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "g.webnn").write_bytes(b'webnn_graph "\xff" v1 {}')
    with pytest.raises(WebnnFormatError, match="not UTF-8"):
        load_webnn(tmp_path / "g.webnn")


def test_legacy_rounding_type_option() -> None:
    text = HEAD + "  inputs { x: f32[1, 1, 5, 5]; }\n  nodes { y = maxPool2d(x, " \
        'windowDimensions=[2, 2], strides=[2, 2], roundingType="ceil"); }\n  outputs { y; }\n}'
    graph = loads(text)
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    want = np.array([[x[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max() for j in range(3)]
                     for i in range(3)], np.float32)
    np.testing.assert_array_equal(graph.context.compute(graph, {"x": x})["y"][0, 0], want)
    with pytest.raises(WebnnFormatError, match="both 'roundingType' and"):
        loads(text.replace('roundingType="ceil"',
                           'roundingType="ceil", outputShapeRounding="floor"'))
