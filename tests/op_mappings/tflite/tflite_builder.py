"""Build small `.tflite` files with the flatbuffer object API and run them in LiteRT.

`ModelBuilder` collects tensors, constant buffers and operators of one subgraph (plus optional
extra subgraphs and signatures) and packs them with file identifier `TFL3`. `run_litert` runs
a model in `ai_edge_litert.interpreter.Interpreter` (the oracle); `check` converts the same
bytes with `convert_tflite`, runs the WebNN graph on the reference backend and compares:
floats within `rtol`·|ref| + `atol` (default atol = 1e-5·max(1, max|ref|)), quantized integer
outputs within `steps` quantization steps, other integers exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import flatbuffers
import numpy as np
import pytest

from tests.optional import LITERT_MISSING

# LiteRT (the [tflite] extra, in [test]) is the oracle and its schema module builds the files:
# without it every test module importing this one is skipped with the reason
S = pytest.importorskip("ai_edge_litert.schema_py_generated", reason=LITERT_MISSING)

TYPES = {"float32": S.TensorType.FLOAT32, "float16": S.TensorType.FLOAT16,
         "int32": S.TensorType.INT32, "uint8": S.TensorType.UINT8, "int64": S.TensorType.INT64,
         "bool": S.TensorType.BOOL, "int16": S.TensorType.INT16, "int8": S.TensorType.INT8,
         "float64": S.TensorType.FLOAT64, "uint32": S.TensorType.UINT32,
         "uint64": S.TensorType.UINT64, "uint16": S.TensorType.UINT16,
         "int4": S.TensorType.INT4, "resource": S.TensorType.RESOURCE}


@dataclass(frozen=True)
class Quant:
    """Quantization parameters of a tensor (per-axis when scale has several entries)."""

    scale: Sequence[float]
    zero_point: Sequence[int]
    axis: int = 0


def rand(*shape: int, low: float = -1.0, high: float = 1.0, seed: int = 0,
         dtype: str = "float32") -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def options_type(options: Any) -> tuple[int, int]:
    """(BuiltinOptions union type, BuiltinOptions2 union type) of an `*OptionsT` object."""
    name = type(options).__name__[:-1]
    if hasattr(S.BuiltinOptions, name):
        return getattr(S.BuiltinOptions, name), 0
    return 0, getattr(S.BuiltinOptions2, name)


class ModelBuilder:
    """One model with a main subgraph (index 0); `subgraph()` starts another one."""

    def __init__(self) -> None:
        self.model = S.ModelT()
        self.model.version = 3
        self.model.description = "test"
        self.model.buffers = [S.BufferT()]
        self.model.operatorCodes = []
        self.model.subgraphs = []
        self.model.signatureDefs = []
        self.subgraph()

    @property
    def sg(self) -> Any:
        return self.model.subgraphs[self._current]

    def subgraph(self, name: str = "") -> int:
        sg = S.SubGraphT()
        sg.tensors, sg.operators, sg.inputs, sg.outputs, sg.name = [], [], [], [], name
        self.model.subgraphs.append(sg)
        self._current = len(self.model.subgraphs) - 1
        return self._current

    def use(self, index: int) -> None:
        self._current = index

    def tensor(self, name: str, shape: Sequence[int], dtype: str = "float32", *,
               data: np.ndarray | bytes | None = None, quant: Quant | None = None,
               shape_signature: Sequence[int] | None = None, sparsity: Any = None,
               has_rank: bool = True) -> int:
        t = S.TensorT()
        t.name = name
        t.shape = list(shape)
        t.type = TYPES[dtype]
        t.hasRank = has_rank
        if shape_signature is not None:
            t.shapeSignature = list(shape_signature)
        t.buffer = 0
        if data is not None:
            raw = data if isinstance(data, bytes) else np.ascontiguousarray(
                data).astype(np.asarray(data).dtype.newbyteorder("<")).tobytes()
            buf = S.BufferT()
            buf.data = list(raw)
            self.model.buffers.append(buf)
            t.buffer = len(self.model.buffers) - 1
        if quant is not None:
            q = S.QuantizationParametersT()
            q.scale = [float(s) for s in quant.scale]
            q.zeroPoint = [int(z) for z in quant.zero_point]
            q.quantizedDimension = quant.axis
            t.quantization = q
        t.sparsity = sparsity
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def input(self, name: str, shape: Sequence[int], dtype: str = "float32", **kw: Any) -> int:
        idx = self.tensor(name, shape, dtype, **kw)
        self.sg.inputs.append(idx)
        return idx

    def const(self, name: str, value: Any, dtype: str | None = None, **kw: Any) -> int:
        arr = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
        return self.tensor(name, arr.shape, dtype or arr.dtype.name, data=arr, **kw)

    def output(self, idx: int) -> int:
        self.sg.outputs.append(idx)
        return idx

    def opcode(self, op: str, version: int = 1, custom_code: str | None = None) -> int:
        code = S.BuiltinOperator.CUSTOM if custom_code else getattr(S.BuiltinOperator, op)
        for i, oc in enumerate(self.model.operatorCodes):
            if oc.builtinCode == code and oc.version == version and oc.customCode == custom_code:
                return i
        oc = S.OperatorCodeT()
        oc.builtinCode = code
        oc.deprecatedBuiltinCode = min(code, 127)
        oc.version = version
        oc.customCode = custom_code
        self.model.operatorCodes.append(oc)
        return len(self.model.operatorCodes) - 1

    def op(self, op: str, inputs: Sequence[int], outputs: Sequence[int], options: Any = None,
           *, version: int = 1, custom_code: str | None = None,
           custom_options: bytes | None = None) -> None:
        o = S.OperatorT()
        o.opcodeIndex = self.opcode(op, version, custom_code)
        o.inputs = list(inputs)
        o.outputs = list(outputs)
        if options is not None:
            t1, t2 = options_type(options)
            if t1:
                o.builtinOptionsType, o.builtinOptions = t1, options
            else:
                o.builtinOptions2Type, o.builtinOptions2 = t2, options
        if custom_options is not None:
            o.customOptions = list(custom_options)
        self.sg.operators.append(o)

    def signature(self, key: str, inputs: dict[str, int], outputs: dict[str, int],
                  subgraph: int = 0) -> None:
        sd = S.SignatureDefT()
        sd.signatureKey = key
        sd.subgraphIndex = subgraph
        sd.inputs, sd.outputs = [], []
        for target, items in ((sd.inputs, inputs), (sd.outputs, outputs)):
            for name, idx in items.items():
                tm = S.TensorMapT()
                tm.name, tm.tensorIndex = name, idx
                target.append(tm)
        self.model.signatureDefs.append(sd)

    def build(self) -> bytes:
        b = flatbuffers.Builder(1024)
        b.Finish(self.model.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def one_op(op: str, inputs: Sequence[np.ndarray | None], options: Any = None, *,
           out_shape: Sequence[int] | None = None, out_dtype: str | None = None,
           constants: Sequence[int] = (), version: int = 1, quant_in: Sequence[Any] = (),
           quant_out: Quant | None = None, n_outputs: int = 1,
           out_shapes: Sequence[Sequence[int]] | None = None) -> bytes:
    """A model with one operator. `inputs[i]` is None for an omitted optional input (-1);
    positions in `constants` become constant tensors, the rest graph inputs."""
    mb = ModelBuilder()
    idx = []
    for i, arr in enumerate(inputs):
        if arr is None:
            idx.append(-1)
            continue
        q = quant_in[i] if i < len(quant_in) else None
        if i in constants:
            idx.append(mb.const(f"c{i}", arr, quant=q))
        else:
            idx.append(mb.input(f"x{i}", arr.shape, arr.dtype.name, quant=q))
    first = next(a for a in inputs if a is not None)
    outs = []
    for k in range(n_outputs):
        shape = (out_shapes[k] if out_shapes else out_shape) or list(first.shape)
        outs.append(mb.output(mb.tensor(f"y{k}", shape, out_dtype or first.dtype.name,
                                        quant=quant_out)))
    mb.op(op, idx, outs, options, version=version)
    return mb.build()


def run_litert(model: bytes, inputs: Sequence[np.ndarray], delegate: bool = True
               ) -> list[np.ndarray]:
    """Run a model in the LiteRT interpreter (default resolver with XNNPACK, or the builtin
    kernels without delegates); inputs and outputs in subgraph order."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = (OpResolverType.AUTO if delegate
            else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interp = Interpreter(model_content=model, experimental_op_resolver_type=kind)
    details = interp.get_input_details()
    for d, arr in zip(details, inputs, strict=True):
        if list(d["shape"]) != list(arr.shape):
            interp.resize_tensor_input(d["index"], list(arr.shape))
    interp.allocate_tensors()
    for d, arr in zip(details, inputs, strict=True):
        interp.set_tensor(d["index"], arr)
    interp.invoke()
    return [np.array(interp.get_tensor(d["index"])) for d in interp.get_output_details()]


def litert_names(model: bytes) -> tuple[list[str], list[str]]:
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_content=model)
    return ([d["name"] for d in interp.get_input_details()],
            [d["name"] for d in interp.get_output_details()])


def compare(ours: np.ndarray, ref: np.ndarray, *, rtol: float = 1e-5, atol: float | None = None,
            steps: int = 2, quantized: bool = False, what: str = "") -> None:
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != LiteRT {ref.shape}"
    if ref.dtype == np.bool_:
        ours = ours.astype(bool)
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} != LiteRT {ref.dtype}"
    if ref.dtype.kind == "f":
        r = ref.astype(np.float64)
        peak = float(np.max(np.abs(r))) if r.size else 0.0
        tol = atol if atol is not None else 1e-5 * max(1.0, peak)
        if ref.dtype == np.float16:
            rtol, tol = max(rtol, 2e-3), max(tol, 2e-3 * max(1.0, peak))
        np.testing.assert_allclose(ours.astype(np.float64), r, rtol=rtol, atol=tol,
                                   err_msg=what)
    elif quantized:
        diff = np.abs(ours.astype(np.int64) - ref.astype(np.int64))
        assert diff.size == 0 or diff.max() <= steps, f"{what}: {diff.max()} steps apart"
    else:
        np.testing.assert_array_equal(ours, ref, err_msg=what)


def check(model: bytes, inputs: Sequence[np.ndarray], *, rtol: float = 1e-5,
          atol: float | None = None, steps: int = 2, quantized: bool | None = None,
          delegate: bool = True, **convert_kw: Any) -> Any:
    """Convert `model`, run it on the reference backend and compare every output with LiteRT.
    Returns the ConversionResult."""
    from converter.frontends.tflite.frontend import convert as convert_tflite

    expected = run_litert(model, inputs, delegate)
    result = convert_tflite(model, **convert_kw)
    feeds = dict(zip(result.input_names, inputs, strict=True))
    ours = result.run(feeds)
    assert list(ours) == result.output_names
    assert len(ours) == len(expected)
    for name, ref in zip(result.output_names, expected, strict=True):
        q = quantized if quantized is not None else ref.dtype in (np.int8, np.uint8) and any(
            vi.name == name and vi.dtype in ("int8", "uint8") for vi in result.outputs)
        compare(ours[name], ref, rtol=rtol, atol=atol, steps=steps, quantized=bool(q),
                what=name)
    return result


@dataclass(frozen=True)
class In:
    """One operator input for `op_model`: a graph input (`const=False`) or a constant."""

    value: np.ndarray
    const: bool = False
    quant: Quant | None = None


def op_model(op: str, inputs: Sequence[In | None], outputs: Sequence[tuple[Any, ...]],
             options: Any = None, *, version: int = 1) -> tuple[bytes, list[np.ndarray]]:
    """A one-operator model whose outputs may differ in dtype: `outputs` holds
    `(shape, dtype)` or `(shape, dtype, Quant)` tuples; None inputs are omitted (-1).
    Returns the model bytes and the values to feed (the non-constant inputs, in order)."""
    mb = ModelBuilder()
    idx, feeds = [], []
    for i, item in enumerate(inputs):
        if item is None:
            idx.append(-1)
        elif item.const:
            idx.append(mb.const(f"c{i}", item.value, quant=item.quant))
        else:
            idx.append(mb.input(f"x{i}", item.value.shape, item.value.dtype.name,
                                quant=item.quant))
            feeds.append(item.value)
    outs = []
    for k, spec in enumerate(outputs):
        shape, dtype = spec[0], spec[1]
        quant = spec[2] if len(spec) > 2 else None
        outs.append(mb.output(mb.tensor(f"y{k}", list(shape), dtype, quant=quant)))
    mb.op(op, idx, outs, options, version=version)
    return mb.build(), feeds
