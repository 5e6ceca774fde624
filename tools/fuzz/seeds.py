"""The seed corpus, generated fresh from the project's own generators (nothing downloaded):

- ONNX: the shipped zoo generators (converter/zoo/models/): make_tiny_cnn.py, make_recurrent.py
  (3 kinds), make_attention.py, and one-node (or few-node) models for Loop, If,
  ConstantOfShape, Expand, Tile, Range, Pad, Resize, OneHot, a sparse initializer, a
  model-local function and external data;
- TFLite: converter/zoo/models/make_int8_tflite.py and a small float model built here (both
  need LiteRT's flatbuffer schema, `ai_edge_litert.schema_py_generated`; skipped when it is
  missing), plus the stored control-flow fixtures of tests/op_mappings/tflite/data (WHILE, IF);
- WebNN graphs: some of those models converted and exported (`converter.io.export`) as `.webnn`
  and `.webnn.json`, each with a WGWT blob + manifest and with a `.safetensors` file, with an
  inputs .npz for `webnn-convert run`; a few converted for chromium-coreml
  (`TARGET_GRAPH_SOURCES`), whose narrowed / widened inputs and outputs give their manifest /
  safetensors metadata a `sourceDataTypes` table;
- limits files (`--target FILE`): each shipped target's `limits.json` and a small hand-written
  one (`SMALL_LIMITS`), beside a model seed that `convert` / `validate` converts for it.

Every seed is deterministic (seeded generators), so a campaign seed reproduces its mutants.
"""

from __future__ import annotations

import importlib.util
import io
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "converter" / "zoo" / "models"
TFLITE_FIXTURES = ROOT / "tests" / "op_mappings" / "tflite" / "data"
MARKER = ".webnn-converter.json"


@dataclass
class Seed:
    """One seed: its files (by name, in one folder), which file is of which kind, the model
    options its commands need (`--dim ...`) and auxiliary files (the inputs of `run`)."""

    name: str
    files: dict[str, bytes]
    kinds: dict[str, str]                 # kind -> the file of that kind
    options: list[str] = field(default_factory=list)
    aux: dict[str, bytes] = field(default_factory=dict)
    model: str = ""                       # limits seeds: the model file converted for them

    @property
    def is_graph(self) -> bool:
        return "webnn" in self.kinds or "webnn-json" in self.kinds


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_fuzz_{name}", MODELS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _litert_schema() -> Any | None:
    try:
        from ai_edge_litert import schema_py_generated
    except ImportError:
        return None
    return schema_py_generated


# -- ONNX -----------------------------------------------------------------------------------


def _onnx_small() -> dict[str, tuple[Any, list[str], dict[str, bytes]]]:
    """name -> (ModelProto, options, extra files) of the one-node models."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    f32, i64 = TensorProto.FLOAT, TensorProto.INT64

    def vi(name: str, dtype: int, shape: list[Any]) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, dtype, shape)

    def init(name: str, value: Any, dtype: Any = None) -> onnx.TensorProto:
        return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)

    def model(name: str, nodes: list[Any], inputs: list[Any], outputs: list[Any],
              inits: list[Any], opset: int = 13, **kw: Any) -> onnx.ModelProto:
        graph = helper.make_graph(nodes, name, inputs, outputs, inits,
                                  sparse_initializer=kw.pop("sparse", None))
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]
                                 + kw.pop("extra_opsets", []), ir_version=8, **kw)

    node = helper.make_node
    rng = np.random.default_rng(7)
    out: dict[str, tuple[Any, list[str], dict[str, bytes]]] = {}

    value = numpy_helper.from_array(np.array([0.5], np.float32), "value")
    out["constant_of_shape"] = (model(
        "constant_of_shape",
        [node("ConstantOfShape", ["shape"], ["c"], value=value),
         node("Add", ["x", "c"], ["y"])],
        [vi("x", f32, [2, 3])], [vi("y", f32, [2, 3])], [init("shape", [2, 3], np.int64)]),
        [], {})
    out["expand"] = (model(
        "expand", [node("Expand", ["x", "shape"], ["y"])], [vi("x", f32, [3, 1])],
        [vi("y", f32, [2, 3, 4])], [init("shape", [2, 3, 4], np.int64)]), [], {})
    out["tile"] = (model(
        "tile", [node("Tile", ["x", "repeats"], ["y"])], [vi("x", f32, [2, 3])],
        [vi("y", f32, [4, 6])], [init("repeats", [2, 2], np.int64)]), [], {})
    out["range"] = (model(
        "range", [node("Range", ["start", "limit", "delta"], ["r"]),
                  node("Add", ["x", "r"], ["y"])],
        [vi("x", f32, [6])], [vi("y", f32, [6])],
        [init("start", 0.0, np.float32), init("limit", 6.0, np.float32),
         init("delta", 1.0, np.float32)]), [], {})
    out["pad"] = (model(
        "pad", [node("Pad", ["x", "pads", "cv"], ["y"], mode="constant")],
        [vi("x", f32, [1, 2, 3, 3])], [vi("y", f32, [1, 2, 5, 5])],
        [init("pads", [0, 0, 1, 1, 0, 0, 1, 1], np.int64), init("cv", 0.5, np.float32)]),
        [], {})
    out["resize"] = (model(
        "resize", [node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
        [vi("x", f32, [1, 1, 4, 4])], [vi("y", f32, [1, 1, 8, 8])],
        [init("scales", [1, 1, 2, 2], np.float32)]), [], {})
    out["one_hot"] = (model(
        "one_hot", [node("OneHot", ["indices", "depth", "values"], ["y"], axis=-1)],
        [vi("indices", i64, [4])], [vi("y", f32, [4, 5])],
        [init("depth", 5, np.int64), init("values", [0.0, 1.0], np.float32)]), [], {})
    sparse = helper.make_sparse_tensor(init("sp", [1.0, 2.0, 3.0], np.float32),
                                       init("sp_idx", [0, 5, 15], np.int64), [4, 4])
    out["sparse"] = (model(
        "sparse", [node("Add", ["x", "sp"], ["y"])], [vi("x", f32, [4, 4])],
        [vi("y", f32, [4, 4])], [], sparse=[sparse]), [], {})
    # Loop: v = v + 1, three times
    body = helper.make_graph(
        [node("Identity", ["cond_in"], ["cond_out"]), node("Add", ["v_in", "one"], ["v_out"])],
        "body", [vi("iter", i64, []), vi("cond_in", TensorProto.BOOL, []), vi("v_in", f32, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("v_out", f32, [2])],
        [init("one", [1.0, 1.0], np.float32)])
    out["loop"] = (model(
        "loop", [node("Loop", ["trip", "cond", "x"], ["y"], body=body)],
        [vi("x", f32, [2])], [vi("y", f32, [2])],
        [init("trip", 3, np.int64), init("cond", True, np.bool_)]), [], {})
    then_g = helper.make_graph([node("Add", ["x", "one_t"], ["t"])], "then", [],
                               [vi("t", f32, [2])], [init("one_t", [1.0, 1.0], np.float32)])
    else_g = helper.make_graph([node("Sub", ["x", "one_e"], ["e"])], "else", [],
                               [vi("e", f32, [2])], [init("one_e", [1.0, 1.0], np.float32)])
    out["if"] = (model(
        "if", [node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
        [vi("x", f32, [2])], [vi("y", f32, [2])], [init("flag", True, np.bool_)]), [], {})
    fn = helper.make_function("local", "Scaled", ["a"], ["b"],
                              [node("Constant", [], ["k"], value_float=2.0),
                               node("Mul", ["a", "k"], ["b"])],
                              [helper.make_opsetid("", 13)])
    out["function"] = (model(
        "function", [node("Scaled", ["x"], ["y"], domain="local")], [vi("x", f32, [2, 3])],
        [vi("y", f32, [2, 3])], [], extra_opsets=[helper.make_opsetid("local", 1)],
        functions=[fn]), [], {})
    # MatMul whose weight lives in an external file beside the model
    w = rng.normal(size=(4, 3)).astype(np.float32)
    wt = init("w", w)
    wt.ClearField("raw_data")
    wt.data_location = TensorProto.EXTERNAL
    for key, val in (("location", "external.data"), ("offset", "0"),
                     ("length", str(w.nbytes))):
        entry = wt.external_data.add()
        entry.key, entry.value = key, val
    out["external"] = (model(
        "external", [node("MatMul", ["x", "w"], ["y"])], [vi("x", f32, [2, 4])],
        [vi("y", f32, [2, 3])], [wt]), [], {"external.data": w.tobytes()})
    return out


def onnx_seeds() -> list[Seed]:
    seeds: list[Seed] = []
    tiny = _module("make_tiny_cnn").make_tiny_cnn(0)
    seeds.append(Seed("tiny_cnn", {"tiny_cnn.onnx": tiny.SerializeToString()},
                      {"onnx": "tiny_cnn.onnx"}, ["--dim", "batch=1"]))
    rec = _module("make_recurrent")
    for kind in sorted(rec.KINDS):
        seeds.append(Seed(kind, {f"{kind}.onnx": rec.KINDS[kind](0).SerializeToString()},
                          {"onnx": f"{kind}.onnx"}, ["--dim", "seq=3", "--dim", "batch=2"]))
    att = _module("make_attention").make_attention(0)
    seeds.append(Seed("attention", {"attention.onnx": att.SerializeToString()},
                      {"onnx": "attention.onnx"}, ["--dim", "seq=8"]))
    for name, (proto, options, extra) in _onnx_small().items():
        files = {f"{name}.onnx": proto.SerializeToString(), **extra}
        seeds.append(Seed(name, files, {"onnx": f"{name}.onnx"}, options))
    return seeds


# -- TFLite ---------------------------------------------------------------------------------


def _tflite_float(S: Any) -> bytes:
    """x [1, 6, 6, 2] -> CONV_2D 3x3 SAME + RELU -> TANH -> RESHAPE [1, 72] -> y."""
    import flatbuffers
    import numpy as np

    rng = np.random.default_rng(3)
    model = S.ModelT()
    model.version, model.description = 3, "webnn-fuzz float seed"
    model.buffers = [S.BufferT()]
    model.operatorCodes = []
    sg = S.SubGraphT()
    sg.tensors, sg.operators, sg.inputs, sg.outputs, sg.name = [], [], [], [], "main"
    model.subgraphs = [sg]

    def tensor(name: str, shape: list[int], ttype: int, data: Any = None) -> int:
        t = S.TensorT()
        t.name, t.shape, t.type, t.buffer = name, shape, ttype, 0
        if data is not None:
            buf = S.BufferT()
            buf.data = list(np.ascontiguousarray(data).tobytes())
            model.buffers.append(buf)
            t.buffer = len(model.buffers) - 1
        sg.tensors.append(t)
        return len(sg.tensors) - 1

    def op(code: int, inputs: list[int], outputs: list[int], otype: int, opts: Any) -> None:
        oc = S.OperatorCodeT()
        oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = code, min(code, 127), 1
        model.operatorCodes.append(oc)
        o = S.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = len(model.operatorCodes) - 1, inputs, outputs
        o.builtinOptionsType, o.builtinOptions = otype, opts
        sg.operators.append(o)

    f32 = S.TensorType.FLOAT32
    x = tensor("x", [1, 6, 6, 2], f32)
    w = tensor("w", [4, 3, 3, 2], f32, rng.normal(0, 0.3, (4, 3, 3, 2)).astype(np.float32))
    b = tensor("b", [4], f32, rng.normal(0, 0.1, 4).astype(np.float32))
    c = tensor("conv", [1, 6, 6, 4], f32)
    conv = S.Conv2DOptionsT()
    conv.padding, conv.strideW, conv.strideH = S.Padding.SAME, 1, 1
    conv.dilationWFactor = conv.dilationHFactor = 1
    conv.fusedActivationFunction = S.ActivationFunctionType.RELU
    op(S.BuiltinOperator.CONV_2D, [x, w, b], [c], S.BuiltinOptions.Conv2DOptions, conv)
    t = tensor("act", [1, 6, 6, 4], f32)
    op(S.BuiltinOperator.TANH, [c], [t], S.BuiltinOptions.NONE, None)
    shape = tensor("shape", [2], S.TensorType.INT32, np.array([1, 144], np.int32))
    y = tensor("y", [1, 144], f32)
    reshape = S.ReshapeOptionsT()
    reshape.newShape = [1, 144]
    op(S.BuiltinOperator.RESHAPE, [t, shape], [y], S.BuiltinOptions.ReshapeOptions, reshape)
    sg.inputs, sg.outputs = [x], [y]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def tflite_seeds() -> list[Seed]:
    seeds: list[Seed] = []
    S = _litert_schema()
    if S is not None:
        seeds.append(Seed("int8_cnn", {"int8_cnn.tflite": _module("make_int8_tflite")
                                       .make_int8_cnn(0)}, {"tflite": "int8_cnn.tflite"}))
        seeds.append(Seed("float_conv", {"float_conv.tflite": _tflite_float(S)},
                          {"tflite": "float_conv.tflite"}))
    for name in ("tf_cond", "keras_gru"):
        path = TFLITE_FIXTURES / f"{name}.tflite"
        if path.is_file():
            seeds.append(Seed(name, {path.name: path.read_bytes()}, {"tflite": path.name}))
    return seeds


# -- WebNN graphs ---------------------------------------------------------------------------


def _inputs_npz(result: Any) -> bytes:
    """Random inputs of `result`'s graph, in the types its callers hold (the source types of
    narrowed / widened inputs)."""
    import numpy as np

    rng = np.random.default_rng(11)
    arrays = {}
    held = dict(getattr(result.graph, "narrowed_inputs", None) or {})
    for v in result.inputs:
        shape = tuple(int(d) for d in v.shape)
        dtype = np.dtype(held.get(v.name, v.dtype))
        if dtype.kind in "iub":
            arrays[v.name] = rng.integers(0, 2, shape).astype(dtype)
        else:
            arrays[v.name] = rng.uniform(-1, 1, shape).astype(dtype)
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]  # (mypy matches allow_pickle)
    return buf.getvalue()


GRAPH_SOURCES = ("tiny_cnn", "attention", "gru_hardsigmoid", "int8_cnn", "one_hot")
GRAPH_FORMATS = (("webnn", "blob"), ("webnn-json", "blob"), ("webnn", "safetensors"),
                 ("webnn-json", "safetensors"))
# Converted for this target, these get a sourceDataTypes table (int64 inputs narrowed, int8
# inputs / outputs widened); exported as .webnn with a blob + manifest and with safetensors.
GRAPH_TARGET = "chromium-coreml"
TARGET_GRAPH_SOURCES = ("attention", "int8_cnn", "one_hot")
TARGET_GRAPH_FORMATS = (("webnn", "blob"), ("webnn", "safetensors"))


def _kind_of(name: str) -> str | None:
    for suffix, kind in ((".webnn.json", "webnn-json"), (".webnn", "webnn"),
                         (".manifest.json", "manifest"), (".weights", "weights"),
                         (".safetensors", "safetensors")):
        if name.endswith(suffix):
            return kind
    return None


def _convert_seed(seed: Seed, folder: Path, target: str | None = None) -> Any:
    """Convert a model seed in-process (as `convert` would) with its --dim options (and for
    `target`)."""
    from converter.api import convert

    for name, data in seed.files.items():
        (folder / name).write_bytes(data)
    free_dims: dict[str, int] = {}
    opts = seed.options
    for flag, value in zip(opts[::2], opts[1::2], strict=True):
        if flag == "--dim":
            key, _, val = value.partition("=")
            free_dims[key] = int(val)
    model = folder / next(iter(seed.kinds.values()))
    kw: dict[str, Any] = {"target": target} if target else {}
    return convert(str(model), free_dims=free_dims, **kw) if free_dims else \
        convert(str(model), **kw)


def export_graphs(models: list[Seed]) -> list[Seed]:
    """The WebNN graph seeds: each of GRAPH_SOURCES in each of GRAPH_FORMATS."""
    from converter.api import export

    out: list[Seed] = []
    by_name = {s.name: s for s in models}
    plan = [(name, None, GRAPH_FORMATS) for name in GRAPH_SOURCES] + \
        [(name, GRAPH_TARGET, TARGET_GRAPH_FORMATS) for name in TARGET_GRAPH_SOURCES]
    with tempfile.TemporaryDirectory(prefix="webnn-fuzz-seeds-") as tmp:
        for name, target, formats in plan:
            if name not in by_name:
                continue
            label = f"{name}.{target}" if target else name
            src = Path(tmp) / label
            src.mkdir()
            result = _convert_seed(by_name[name], src, target)
            inputs = _inputs_npz(result)
            for fmt, weights in formats:
                folder = Path(tmp) / f"{label}-{fmt}-{weights}"
                export(result, folder, format=fmt, weights=weights, stem=name)
                files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())
                         if p.name != MARKER}
                kinds = {k: n for n in files if (k := _kind_of(n)) is not None}
                out.append(Seed(f"{label}.{fmt}.{weights}", files, kinds, [],
                                {"inputs.npz": inputs}))
    return out


# -- limits files ---------------------------------------------------------------------------


# A small hand-written opSupportLimits(): the ops of the model seeds below, few types.
SMALL_LIMITS: dict[str, Any] = {
    "preferredInputLayout": "nhwc",
    "maxTensorByteLength": 1 << 30,
    "input": {"dataTypes": ["float32", "float16", "int32"], "rankRange": {"min": 0, "max": 4}},
    "constant": {"dataTypes": ["float32", "float16", "int32"],
                 "rankRange": {"min": 0, "max": 4}},
    "output": {"dataTypes": ["float32", "float16", "int32"], "rankRange": {"min": 0, "max": 4}},
    "conv2d": {"input": {"dataTypes": ["float32"], "rankRange": {"min": 4, "max": 4}},
               "filter": {"dataTypes": ["float32"], "rankRange": {"min": 4, "max": 4}},
               "bias": {"dataTypes": ["float32"], "rankRange": {"min": 1, "max": 1}},
               "output": {"dataTypes": ["float32"], "rankRange": {"min": 4, "max": 4}}},
    "relu": {"input": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 4}},
             "output": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 4}}},
    "reshape": {"input": {"dataTypes": ["float32", "int32"], "rankRange": {"min": 0, "max": 4}},
                "output": {"dataTypes": ["float32", "int32"],
                           "rankRange": {"min": 0, "max": 4}}},
    "gemm": {"a": {"dataTypes": ["float32"], "rankRange": {"min": 2, "max": 2}},
             "b": {"dataTypes": ["float32"], "rankRange": {"min": 2, "max": 2}},
             "c": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 2}},
             "output": {"dataTypes": ["float32"], "rankRange": {"min": 2, "max": 2}}},
    "cast": {"input": {"dataTypes": ["float32", "int32", "int8"],
                       "rankRange": {"min": 0, "max": 4}},
             "output": {"dataTypes": ["float32", "int32", "int8"],
                        "rankRange": {"min": 0, "max": 4}}},
}
LIMITS_MODELS = ("tiny_cnn", "attention", "one_hot", "int8_cnn", "float_conv")


def limits_seeds(models: list[Seed]) -> list[Seed]:
    """A limits file (each shipped target's `limits.json`, and SMALL_LIMITS) beside a model
    seed of LIMITS_MODELS (each file with each model)."""
    import json

    from converter.passes.targets import known_targets, load_target

    sources = {n: (json.dumps(load_target(n).limits_dict(), indent=2) + "\n").encode()
               for n in known_targets()}
    sources["small"] = (json.dumps(SMALL_LIMITS, indent=2) + "\n").encode()
    by_name = {s.name: s for s in models}
    out: list[Seed] = []
    for model_name in LIMITS_MODELS:
        model = by_name.get(model_name)
        if model is None:
            continue
        model_file = next(iter(model.kinds.values()))
        for source, data in sources.items():
            out.append(Seed(f"limits-{source}.{model_name}", {**model.files, "limits.json": data},
                            {"limits": "limits.json"}, list(model.options), model=model_file))
    return out


def corpus() -> list[Seed]:
    """Every seed (model seeds first, then the exported graphs, then the limits files)."""
    models = onnx_seeds() + tflite_seeds()
    return models + export_graphs(models) + limits_seeds(models)
