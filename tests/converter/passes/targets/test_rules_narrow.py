"""Rule narrow-int64 (converter/passes/targets/rules_narrow.py): small graphs lowered for an
`opSupportLimits()` file without 64-bit integers (the reference runtime's own limits with
int64/uint64 removed everywhere), run on the reference runtime and compared with numpy
int64 / float64 oracles; a constant out of int32 range is refused in one line; a target that
lacks int64 for one operation only gets that operation narrowed between casts; the feeds
convert int64 values with a range check."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.feeds import graph_feeds, source_outputs
from converter.core.ir import ValueInfo
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.core.webnn.limits import op_support_limits
from converter.passes.targets import Target, load_target
from converter.passes.targets.passes import lower
from tests.converter.io.export.node_harness import _node, _run_check, needs_node

WIDE = ("int64", "uint64")


def _without(value: Any, types: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: ([t for t in v if t not in types] if k == "dataTypes" else
                    _without(v, types)) for k, v in value.items()}
    return value


def limits_file(folder: Path, drop: tuple[str, ...] = WIDE,
                only: dict[str, tuple[str, ...]] | None = None) -> Path:
    """An opSupportLimits() file: the reference runtime's limits without `drop` everywhere,
    or (with `only`) without the listed types for the listed operators only."""
    limits = op_support_limits()
    if only is None:
        limits = _without(limits, drop)
    else:
        for op, types in only.items():
            limits[op] = _without(limits[op], types)
    path = folder / "no64.json"
    path.write_text(json.dumps(limits), encoding="utf-8")
    return path


@pytest.fixture()
def no64(tmp_path: Path) -> Target:
    return load_target(limits_file(tmp_path))


def _operands(graph: MLGraph) -> list[Any]:
    out = [*graph.inputs.values(), *graph.constants]
    for operation in graph.operations:
        out += list(operation.outputs)
    return out


def test_int64_ids_gather_embeddings(no64: Target) -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    ids = b.input("ids", shape=[2, 3], data_type="int64")
    table = np.random.default_rng(0).standard_normal((7, 4)).astype(np.float32)
    graph = b.build({"emb": b.gather(b.constant(table, "float32"), ids, axis=0)})
    lowered = lower(graph, no64)
    g = lowered.graph
    assert g.input_descriptors["ids"].data_type == "int32"
    assert g.narrowed_inputs == {"ids": "int64"} and g.narrowed_outputs == {}
    assert any("inputs 'ids' narrowed" in n and "rule narrow-int64" in n for n in lowered.notes)
    feed = np.array([[0, 6, 3], [2, 2, 5]], dtype=np.int64)
    arrays = graph_feeds(g, [ValueInfo("ids", "int64", (2, 3))], {"ids": feed})
    assert arrays["ids"].dtype == np.int32
    got = ctx.compute(g, arrays)["emb"]
    np.testing.assert_array_equal(got, table[feed])  # numpy's take on the int64 ids


def test_scalar_int64_index_keeps_its_rank(no64: Target) -> None:
    """gather with a rank-0 int64 constant index (BERT's pooler takes token 0) stays rank 0
    once narrowed."""
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2, 5, 3], data_type="float32")
    ids = b.input("ids", shape=[2], data_type="int64")
    first = b.gather(x, b.constant(np.array(0, np.int64), "int64"), axis=1)
    graph = b.build({"first": first, "ids": b.identity(ids)})
    g = lower(graph, no64).graph
    assert g.output_descriptors["first"].shape == (2, 3)
    assert [c.shape for c in g.constants] == [()]
    feed = np.random.default_rng(4).standard_normal((2, 5, 3)).astype(np.float32)
    got = ctx.compute(g, {"x": feed, "ids": np.array([1, 2], np.int32)})["first"]
    np.testing.assert_array_equal(got, feed[:, 0])


def test_argmax_int64_output(no64: Target) -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[3, 5], data_type="float32")
    graph = b.build({"i": b.arg_max(x, 1, output_data_type="int64")})
    g = lower(graph, no64).graph
    assert g.output_descriptors["i"].data_type == "int32"
    assert g.narrowed_outputs == {"i": "int64"}
    feed = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    raw = ctx.compute(g, {"x": feed})
    out = source_outputs([ValueInfo("i", "int64", (3,))], raw)["i"]
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, np.argmax(feed, axis=1))


def test_cumulative_sum_int64(no64: Target) -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2, 6], data_type="int64")
    shift = b.constant(np.array([-1_000_000_000], dtype=np.int64), "int64")
    graph = b.build({"y": b.add(b.cumulative_sum(x, 1, exclusive=True), shift)})
    g = lower(graph, no64).graph
    feed = np.random.default_rng(2).integers(-10**6, 10**6, (2, 6), dtype=np.int64)
    want = np.concatenate([np.zeros((2, 1), np.int64), np.cumsum(feed, 1)[:, :-1]], 1) \
        - 1_000_000_000
    got = ctx.compute(g, graph_feeds(g, [ValueInfo("x", "int64", (2, 6))], {"x": feed}))["y"]
    np.testing.assert_array_equal(got.astype(np.int64), want)


def test_no_int64_operand_left(no64: Target) -> None:
    """Inputs, constants, casts, argMin, reshape-free arithmetic: nothing 64-bit remains."""
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    ids = b.input("ids", shape=[4], data_type="int64")
    u = b.input("u", shape=[4], data_type="uint64")
    x = b.input("x", shape=[4, 3], data_type="float32")
    pos = b.add(ids, b.constant(np.array([1], np.int64), "int64"))
    as64 = b.cast(b.arg_min(x, 1, output_data_type="int32"), "int64")
    y = b.mul(b.clamp(pos, min_value=-2**40, max_value=2**40), as64)
    v = b.add(u, b.constant(np.array([7], np.uint64), "uint64"))
    graph = b.build({"y": y, "v": v, "f": b.cast(y, "float32")})
    lowered = lower(graph, no64)
    g = lowered.graph
    left = [o.descriptor for o in _operands(g) if o.data_type in WIDE]
    assert left == []
    assert g.narrowed_inputs == {"ids": "int64", "u": "uint64"}
    assert g.narrowed_outputs == {"y": "int64", "v": "uint64"}
    rng = np.random.default_rng(3)
    feeds: dict[str, np.ndarray] = {
        "ids": rng.integers(-1000, 1000, 4), "u": rng.integers(0, 1000, 4).astype(np.uint64),
        "x": rng.standard_normal((4, 3)).astype(np.float32)}
    infos = [ValueInfo("ids", "int64", (4,)), ValueInfo("u", "uint64", (4,)),
             ValueInfo("x", "float32", (4, 3))]
    out = source_outputs([ValueInfo("y", "int64", (4,)), ValueInfo("v", "uint64", (4,)),
                          ValueInfo("f", "float32", (4,))],
                         ctx.compute(g, graph_feeds(g, infos, feeds)))
    want_y = (feeds["ids"] + 1) * np.argmin(feeds["x"], 1)
    np.testing.assert_array_equal(out["y"], want_y)
    assert out["y"].dtype == np.int64 and out["v"].dtype == np.uint64
    np.testing.assert_array_equal(out["v"], feeds["u"] + np.uint64(7))
    np.testing.assert_array_equal(out["f"], want_y.astype(np.float64).astype(np.float32))


def test_constant_out_of_range_is_refused(no64: Target) -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2], data_type="int64")
    big = b.constant(np.array([5, 3_000_000_000], np.int64), "int64")
    graph = b.build({"y": b.add(x, big, label="offset")})
    with pytest.raises(UnsupportedDataType) as info:
        lower(graph, no64)
    text = str(info.value)
    assert "\n" not in text
    assert "constant (int64 [2])" in text and "add 'offset'" in text
    assert "3000000000" in text and "outside int32" in text and no64.name in text


def test_pad_value_out_of_range_is_refused(no64: Target) -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2], data_type="int64")
    graph = b.build({"y": b.pad(x, [1], [1], value=-2**40)})
    with pytest.raises(UnsupportedDataType, match="padding value holds -1099511627776"):
        lower(graph, no64)


def test_feed_out_of_range_is_refused(no64: Target) -> None:
    b = MLGraphBuilder(ML().create_context())
    ids = b.input("ids", shape=[2], data_type="int64")
    g = lower(b.build({"y": b.identity(b.add(ids, ids))}), no64).graph
    with pytest.raises(InvalidModel, match=r"input 'ids': value -2147483649 does not fit int32"):
        graph_feeds(g, [ValueInfo("ids", "int64", (2,))],
                    {"ids": np.array([0, -2**31 - 1], np.int64)})


def test_one_operation_lacking_int64_runs_in_int32(tmp_path: Path) -> None:
    """A target with int64 everywhere but div: only the div is narrowed, between casts; the
    graph's inputs and outputs keep int64."""
    target = load_target(limits_file(tmp_path, only={"div": WIDE}))
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    a = b.input("a", shape=[5], data_type="int64")
    d = b.constant(np.array([3, -3, 7, 2, 5], np.int64), "int64")
    graph = b.build({"q": b.add(b.div(a, d), a)})
    lowered = lower(graph, target)
    g = lowered.graph
    assert g.input_descriptors == graph.input_descriptors
    assert g.output_descriptors == graph.output_descriptors
    assert g.narrowed_inputs == {} and g.narrowed_outputs == {}
    divs = [o for o in g.operations if o.op == "div"]
    assert [o.outputs[0].data_type for o in divs] == ["int32"]
    assert "div on int64 as int32" in " ".join(lowered.notes)
    feed = np.array([10, 10, -20, 9, 1000], np.int64)
    got = ctx.compute(g, {"a": feed})["q"]
    # WebNN div on integers truncates toward zero (the spec's integer division)
    want = np.trunc(feed.astype(np.float64) / np.array([3, -3, 7, 2, 5])).astype(np.int64) \
        + feed
    np.testing.assert_array_equal(got, want)


def test_target_with_int64_is_left_alone(tmp_path: Path) -> None:
    target = load_target(limits_file(tmp_path, drop=()))
    b = MLGraphBuilder(ML().create_context())
    ids = b.input("ids", shape=[2], data_type="int64")
    graph = b.build({"y": b.add(ids, ids)})
    lowered = lower(graph, target)
    assert lowered.graph is graph and "narrow-int64" not in lowered.applied


def ids_model(path: Path) -> Path:
    """An ONNX model with int64 input ids: Gather of embeddings, ArgMax (int64 output) and
    CumSum + 1 of the ids (int64 output)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    emb = np.random.default_rng(0).standard_normal((11, 4)).astype(np.float32)
    inits = [numpy_helper.from_array(emb, "emb"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(1, np.int64), "axis")]
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["e"], axis=0),
             helper.make_node("ArgMax", ["e"], ["am"], axis=2, keepdims=0),
             helper.make_node("CumSum", ["ids", "axis"], ["cs"]),
             helper.make_node("Add", ["cs", "one"], ["pos"])]
    graph = helper.make_graph(
        nodes, "ids", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 5])],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 5, 4]),
         helper.make_tensor_value_info("am", TensorProto.INT64, [1, 5]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [1, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_cli_validate_with_a_limits_file_without_int64(tmp_path: Path) -> None:
    """`webnn-convert validate model.onnx --target LIMITS.json` against onnxruntime: the
    int64 ids input and outputs are narrowed, fed and compared as int64."""
    pytest.importorskip("onnxruntime")
    from click.testing import CliRunner

    from cli.main import cli

    model = ids_model(tmp_path / "ids.onnx")
    limits = limits_file(tmp_path)
    r = CliRunner().invoke(cli, ["validate", str(model), "--target", str(limits), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["verdict"] == "pass", report
    assert {o["name"]: o["dtype"] for o in report["outputs"]} == \
        {"e": "float32", "am": "int64", "pos": "int64"}
    assert all(o["passed"] for o in report["outputs"])
    assert any("rule narrow-int64" in n and "inputs 'ids' narrowed" in n
               for n in report["notes"]), report["notes"]
    r = CliRunner().invoke(cli, ["convert", str(model), "-o", str(tmp_path / "out"),
                                 "--target", str(limits), "--json"])
    assert r.exit_code == 0, r.output
    assert any("rule narrow-int64" in w for w in json.loads(r.stdout)["report"]["warnings"])


def test_run_takes_int64_feeds_and_gives_int64_outputs(tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    from converter.api import convert

    model = ids_model(tmp_path / "ids.onnx")
    result = convert(model, target=limits_file(tmp_path))
    assert result.graph.input_descriptors["ids"].data_type == "int32"
    ids = np.array([[3, 10, 0, 7, 7]], np.int64)
    got = result.run({"ids": ids})
    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids})
    for name, ref in zip(("e", "am", "pos"), want, strict=True):
        assert got[name].dtype == ref.dtype, name
        np.testing.assert_array_equal(got[name], ref)
    with pytest.raises(InvalidModel, match="input 'ids': value 4294967296 does not fit"):
        result.run({"ids": np.array([[1, 2, 3, 4, 2**32]], np.int64)})


_JS_CHECK = """
const mod = await import(process.argv[2]);
const ids = mod.INPUTS.find((d) => d.name === "ids");
const am = mod.OUTPUTS.find((d) => d.name === "am");
const given = BigInt64Array.from([0n, 6n, 3n, 2n, 2n, 5n]);
const fed = mod.narrowInput(ids, given);
let refused = "";
try {
  mod.narrowInput(ids, BigInt64Array.from([0n, 1n, 2n, 3n, 4n, 2n ** 31n]));
} catch (e) {
  refused = `${e.name}: ${e.message}`;
}
const back = mod.widenOutput(am, new Int32Array([3, -1, 0, 2, 1, 7]).buffer);
console.log(JSON.stringify({
  ids, am, fedType: fed.constructor.name, fed: Array.from(fed),
  fromNumbers: Array.from(mod.narrowInput(ids, [1, "2", 3n, 4, 5, 6])),
  refused, backType: back.constructor.name, back: Array.from(back, String),
}));
"""


@needs_node
def test_javascript_converts_bigint64_inputs_and_outputs(no64: Target, tmp_path: Path) -> None:
    """The generated module (run in node) takes a BigInt64Array for an int64 input narrowed
    to int32, refuses a value beyond int32, and gives a narrowed int64 output back as a
    BigInt64Array; the page passes `node --check`."""
    from converter.io.export.javascript import to_javascript

    b = MLGraphBuilder(ML().create_context())
    ids = b.input("ids", shape=[2, 3], data_type="int64")
    table = b.constant(np.arange(28, dtype=np.float32).reshape(7, 4), "float32")
    emb = b.gather(table, ids, axis=0)
    graph = lower(b.build({"emb": emb, "am": b.arg_max(emb, 2, output_data_type="int64")}),
                  no64).graph
    files = to_javascript(graph, "model")
    got = _run_check(files.module, _JS_CHECK, tmp_path)
    assert got["ids"] == {"name": "ids", "dataType": "int32", "shape": [2, 3],
                          "sourceDataType": "int64"}
    assert got["am"]["dataType"] == "int32" and got["am"]["sourceDataType"] == "int64"
    assert got["fedType"] == "Int32Array" and got["fed"] == [0, 6, 3, 2, 2, 5]
    assert got["fromNumbers"] == [1, 2, 3, 4, 5, 6]
    assert got["refused"].startswith('RangeError: input "ids": value 2147483648 does not fit '
                                     "int32")
    assert got["backType"] == "BigInt64Array" and got["back"] == ["3", "-1", "0", "2", "1", "7"]
    assert "int32 (given as int64, range-checked)" in files.html
    script = re.search(r'<script type="module">(.*?)</script>', files.html, re.S)
    assert script is not None
    (tmp_path / "page.mjs").write_text(script.group(1), encoding="utf-8")
    check = _node("--check", tmp_path / "page.mjs")
    assert check.returncode == 0, check.stderr
