"""TFLite (LiteRT) reader: a `.tflite` flatbuffer -> `TFLiteModel` and a `SourceGraph`.

What it does (see ../shared/docs/tflite-mapping.md section 1):
- parses the flatbuffer with the `tflite` accessor bindings (a core dependency: reading
  needs no LiteRT); builtin options (and the `BuiltinOptions2` union) are decoded by
  `options`, which fills every schema default, into plain dicts with the schema's snake_case
  field names (`fused_activation_function`, `stride_w`, ...; enums stay ints). An operator
  without an options table gets the defaults of its op's options type;
- operator code = max(builtin_code, deprecated_builtin_code); CUSTOM ops are named by their
  `custom_code` and live in domain "custom" (`attrs["custom_options"]` holds the raw bytes);
- optional inputs (-1) stay in place as "" in `Node.inputs`;
- buffers: inline data or the `offset`/`size` form of files > 2 GB (checked against the file
  length before slicing); arrays are read-only views of the file (memory-mapped for paths);
  INT4 constants are unpacked to int8 (low nibble first), bfloat16 to float32;
  sparse constants (`Tensor.sparsity`) are densified here, so DENSIFY is a pure pass-through;
- shapes: a -1 in the `shape_signature` of a graph input is converted at the stored `shape`
  size, as LiteRT does (its `get_input_details()["shape"]`, the size it allocates and runs
  at), with a warning in the conversion report; `input_dims` (by input name and axis) and
  `input_shapes` (whole shapes by input name) set other sizes. Unknown ranks and -1 dims
  without a stored size must be set; one `UnresolvedDimensions` error lists all of them;
- names: without a signature, graph inputs/outputs are named by their tensor names (what
  LiteRT's `get_input_details()` reports); with `signature=key`, by the SignatureDef aliases.
  Subgraph order is kept either way. Other tensors keep their tensor name unless it is empty
  or already taken (then `name#index`);
- every subgraph is parsed (`TFLiteModel.subgraphs`), e.g. for IF/WHILE bodies;
- quantization parameters (scale, zero_point, quantized_dimension, details type) and
  sparsity are kept per tensor in `TensorInfo`, reachable from each node
  (`TFLiteNode.input_infos` / `output_infos`).

Truncated or hostile files raise `InvalidModel` naming the file; vector lengths and buffer
ranges are checked against the file size so a hostile file cannot make the reader allocate
more than the file holds (plus densified sparse tensors, bounded by their declared shape).

Restrictions: external buffer files (`Tensor.external_buffer`) are rejected; string,
complex, resource and variant tensors are kept as dtype names without data conversion.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import tflite

from ...errors import Fix, InvalidModel, UnresolvedDimensions, render_fixes
from ...ir import Node, SourceGraph, ValueInfo
from ..free_dims import InputDims, check_input_dims, fixes_for
from . import options as schema
from .options import OPTIONS2_NAMES, OPTIONS_NAMES

# -- enums --------------------------------------------------------------------------------


CUSTOM_CODE = 32

TENSOR_TYPES: dict[int, str] = {
    0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool",
    7: "int16", 8: "complex64", 9: "int8", 10: "float64", 11: "complex128", 12: "uint64",
    13: "resource", 14: "variant", 15: "uint32", 16: "uint16", 17: "int4", 18: "bfloat16",
    19: "int2", 20: "uint4", 21: "float8_e4m3fn", 22: "float8_e5m2",
}
_NUMPY_READABLE = {"float32", "float16", "int32", "uint8", "int64", "bool", "int16", "int8",
                   "float64", "uint64", "uint32", "uint16", "complex64", "complex128"}

# ops whose options table is not named after the op
_OPTIONS_OF: dict[str, str] = {
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions", "L2_NORMALIZATION": "L2NormOptions",
    "MEAN": "ReducerOptions", "SUM": "ReducerOptions", "REDUCE_PROD": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions",
    "REDUCE_ANY": "ReducerOptions", "REDUCE_ALL": "ReducerOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions", "CONCAT_EMBEDDINGS": "ConcatEmbeddingsOptions",
    "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "LSTM": "LSTMOptions", "MIRROR_PAD": "MirrorPadOptions", "ARG_MAX": "ArgMaxOptions",
    "ARG_MIN": "ArgMinOptions", "SELECT_V2": "SelectV2Options", "SCATTER_ND": "ScatterNdOptions",
    "GATHER_ND": "GatherNdOptions", "BATCH_MATMUL": "BatchMatMulOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions", "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "REVERSE_V2": "ReverseV2Options", "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
}


def _norm(name: str) -> str:
    return name.replace("_", "").lower().removesuffix("options")


_OPTIONS_BY_NORM = {_norm(n): n for n in OPTIONS_NAMES.values()}


def options_class_for(op_type: str) -> str | None:
    """Name of the BuiltinOptions table a builtin op uses (None when it has none)."""
    if op_type in _OPTIONS_OF:
        return _OPTIONS_OF[op_type]
    return _OPTIONS_BY_NORM.get(_norm(op_type))


# -- records -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class QuantInfo:
    """Quantization parameters: real = scale * (q - zero_point); per-axis along
    `quantized_dimension` when `scale` has more than one entry. `details` names the
    `QuantizationDetails` union member when the file uses one (then scale/zero_point may be
    meaningless)."""

    scale: np.ndarray
    zero_point: np.ndarray
    quantized_dimension: int = 0
    details: str | None = None

    @property
    def per_axis(self) -> bool:
        return self.scale.size > 1

    def same_as(self, other: QuantInfo | None) -> bool:
        return (other is not None and self.quantized_dimension == other.quantized_dimension
                and np.array_equal(self.scale, other.scale)
                and np.array_equal(self.zero_point, other.zero_point))


@dataclass(frozen=True, eq=False)
class DimMeta:
    """One level of a sparse tensor: DENSE (`dense_size`) or SPARSE_CSR (`segments`,
    `indices`)."""

    format: str
    dense_size: int = 0
    segments: np.ndarray | None = None
    indices: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class SparsityInfo:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dim_metadata: tuple[DimMeta, ...]


@dataclass(frozen=True, eq=False)
class TensorInfo:
    """One tensor of a subgraph. `name` is the value name used in the SourceGraph (unique),
    `tensor_name` the name stored in the file. `shape` is the stored shape; `shape_signature`
    has -1 for dynamic dims (None when the file has none); `has_rank` False with an empty
    shape means unknown rank."""

    index: int
    name: str
    tensor_name: str
    dtype: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    has_rank: bool
    buffer: int
    quant: QuantInfo | None = None
    sparsity: SparsityInfo | None = None
    is_variable: bool = False

    @property
    def quantized(self) -> bool:
        """True for integer tensors that carry scale/zero-point quantization."""
        return (self.quant is not None and self.quant.scale.size > 0
                and self.dtype in ("int8", "uint8", "int16", "int32", "int64", "int4", "uint4"))


@dataclass(frozen=True, eq=False)
class TFLiteNode(Node):
    """A TFLite operator. `op_type` is the builtin name (e.g. "CONV_2D") or the custom code
    (domain "custom"); `version` the operator-code version; `attrs` the decoded options with
    schema defaults; `input_infos`/`output_infos` the tensors (None for omitted inputs);
    `settings` the conversion options (e.g. {"fold_fp16": True})."""

    input_infos: tuple[TensorInfo | None, ...] = ()
    output_infos: tuple[TensorInfo, ...] = ()
    subgraph: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class TFLiteSubgraph:
    index: int
    name: str
    tensors: tuple[TensorInfo, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    nodes: tuple[TFLiteNode, ...]


@dataclass(frozen=True)
class SignatureDef:
    key: str
    subgraph_index: int
    inputs: tuple[tuple[str, int], ...]
    outputs: tuple[tuple[str, int], ...]


@dataclass(frozen=True, eq=False)
class TFLiteModel:
    """The whole file: every subgraph, signatures, metadata (name -> bytes), constants per
    subgraph (value name -> array)."""

    label: str
    version: int
    description: str
    subgraphs: tuple[TFLiteSubgraph, ...]
    signatures: tuple[SignatureDef, ...]
    metadata: Mapping[str, bytes]
    constants: tuple[Mapping[str, np.ndarray], ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class TFLiteSourceGraph(SourceGraph):
    """SourceGraph of the chosen subgraph plus the TFLite details."""

    model: TFLiteModel | None = None
    subgraph_index: int = 0
    tensors: Mapping[str, TensorInfo] = field(default_factory=dict)
    signature: str | None = None


# -- reading ------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: Any, label: str, settings: Mapping[str, Any]) -> None:
        self.data = data
        self.size = len(data)
        self.label = label
        self.settings = MappingProxyType(dict(settings))
        self.warnings: list[str] = []

    def fail(self, message: str) -> InvalidModel:
        return InvalidModel(f"{self.label}: {message}")

    def count(self, n: int, what: str, elem: int = 4) -> int:
        if n < 0 or n * elem > self.size:
            raise self.fail(f"{what} claims {n} entries, more than the file can hold")
        return n

    def array(self, getter: Any, length: int, what: str, elem: int) -> np.ndarray:
        self.count(length, what, elem)
        value = getter()
        if isinstance(value, int):  # absent vector
            return np.zeros(0, np.int64)
        return value

    # -- model -------------------------------------------------------------------------
    def read(self) -> TFLiteModel:
        if self.size < 8:
            raise self.fail("not a TFLite model (file shorter than 8 bytes)")
        ident = bytes(self.data[4:8])
        if ident != b"TFL3":
            raise self.fail(f"not a TFLite model (file identifier {ident!r}, expected b'TFL3')")
        model = tflite.Model.GetRootAs(self.data, 0)
        self.model = model
        opcodes = []
        for i in range(self.count(model.OperatorCodesLength(), "operator_codes")):
            oc = model.OperatorCodes(i)
            code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            custom = oc.CustomCode()
            opcodes.append((code, custom.decode("utf-8", "replace") if custom else None,
                            int(oc.Version())))
        self.opcodes = opcodes
        self.buffers = [model.Buffers(i) for i in range(
            self.count(model.BuffersLength(), "buffers"))]
        self.buffer_cache: dict[int, np.ndarray | None] = {}
        metadata = {}
        for i in range(self.count(model.MetadataLength(), "metadata")):
            md = model.Metadata(i)
            name = (md.Name() or b"").decode("utf-8", "replace")
            raw = self.buffer_bytes(int(md.Buffer()), f"metadata {name!r}")
            metadata[name] = bytes(raw) if raw is not None else b""
        signatures = []
        for i in range(self.count(model.SignatureDefsLength(), "signature_defs")):
            sd = model.SignatureDefs(i)
            maps = []
            for get, n in ((sd.Inputs, sd.InputsLength()), (sd.Outputs, sd.OutputsLength())):
                items = []
                for j in range(self.count(n, "signature tensors")):
                    tm = get(j)
                    items.append(((tm.Name() or b"").decode("utf-8", "replace"),
                                  int(tm.TensorIndex())))
                maps.append(tuple(items))
            signatures.append(SignatureDef((sd.SignatureKey() or b"").decode("utf-8", "replace"),
                                           int(sd.SubgraphIndex()), maps[0], maps[1]))
        self.signatures = tuple(signatures)
        n_sub = self.count(model.SubgraphsLength(), "subgraphs")
        if n_sub == 0:
            raise self.fail("the model has no subgraphs")
        subgraphs, constants = [], []
        for s in range(n_sub):
            sub, consts = self.subgraph(s)
            subgraphs.append(sub)
            constants.append(MappingProxyType(consts))
        for sig in self.signatures:
            if not 0 <= sig.subgraph_index < n_sub:
                raise self.fail(f"signature {sig.key!r} names subgraph {sig.subgraph_index}, "
                                f"the model has {n_sub}")
        return TFLiteModel(self.label, int(model.Version()),
                           (model.Description() or b"").decode("utf-8", "replace"),
                           tuple(subgraphs), self.signatures, MappingProxyType(metadata),
                           tuple(constants), tuple(self.warnings))

    # -- buffers -------------------------------------------------------------------------
    def buffer_bytes(self, index: int, what: str) -> np.ndarray | None:
        """uint8 view of a buffer's data, or None when empty."""
        if index in self.buffer_cache:
            return self.buffer_cache[index]
        if not 0 <= index < len(self.buffers):
            raise self.fail(f"{what} refers to buffer {index}, the model has "
                            f"{len(self.buffers)}")
        buf = self.buffers[index]
        offset, size = int(buf.Offset()), int(buf.Size())
        out: np.ndarray | None
        if offset > 1:
            if size < 0 or offset + size > self.size:
                raise self.fail(f"buffer {index} ({what}) range offset={offset} size={size} "
                                f"lies outside the file ({self.size} bytes)")
            out = np.frombuffer(self.data, np.uint8, size, offset) if size else None
        else:
            n = self.count(buf.DataLength(), f"buffer {index}", 1)
            out = None if n == 0 else buf.DataAsNumpy()
        self.buffer_cache[index] = out
        return out

    # -- subgraphs -----------------------------------------------------------------------
    def subgraph(self, s: int) -> tuple[TFLiteSubgraph, dict[str, np.ndarray]]:
        sg = self.model.Subgraphs(s)
        n_t = self.count(sg.TensorsLength(), f"subgraph {s} tensors")
        inputs = tuple(int(i) for i in self.array(sg.InputsAsNumpy, sg.InputsLength(),
                                                   "subgraph inputs", 4))
        outputs = tuple(int(i) for i in self.array(sg.OutputsAsNumpy, sg.OutputsLength(),
                                                    "subgraph outputs", 4))
        for i in inputs + outputs:
            if not 0 <= i < n_t:
                raise self.fail(f"subgraph {s} input/output tensor {i} does not exist "
                                f"({n_t} tensors)")
        raw = [sg.Tensors(i) for i in range(n_t)]
        stored = [(t.Name() or b"").decode("utf-8", "replace") for t in raw]
        names = self.value_names(s, stored, inputs, outputs)
        tensors: list[TensorInfo] = []
        consts: dict[str, np.ndarray] = {}
        for i, t in enumerate(raw):
            info = self.tensor(i, t, names[i], stored[i])
            tensors.append(info)
            value = self.tensor_value(info)
            if value is not None and i not in inputs:
                consts[info.name] = value
            elif info.is_variable and i not in inputs and info.dtype in _NUMPY_READABLE:
                consts[info.name] = _ro(np.zeros(info.shape, info.dtype))
                self.warnings.append(f"variable tensor {info.tensor_name!r} starts as zeros")
        nodes = []
        for k in range(self.count(sg.OperatorsLength(), f"subgraph {s} operators")):
            nodes.append(self.operator(s, k, sg.Operators(k), tensors))
        name = (sg.Name() or b"").decode("utf-8", "replace")
        return TFLiteSubgraph(s, name, tuple(tensors), inputs, outputs, tuple(nodes)), consts

    def value_names(self, s: int, stored: list[str], inputs: tuple[int, ...],
                    outputs: tuple[int, ...]) -> list[str]:
        """Unique value names: graph IO first (signature aliases when chosen), then others."""
        chosen = self.settings.get("signature_map", {}).get(s, {})
        names: list[str | None] = [None] * len(stored)
        taken: set[str] = set()

        def claim(i: int, want: str) -> None:
            base = want or f"tensor#{i}"
            name = base if base not in taken else f"{base}#{i}"
            while name in taken:
                name += "_"
            names[i] = name
            taken.add(name)

        for i in list(inputs) + list(outputs):
            if names[i] is None:
                claim(i, chosen.get(i, stored[i]))
        for i, want in enumerate(stored):
            if names[i] is None:
                claim(i, want)
        return [n for n in names if n is not None]

    def tensor(self, i: int, t: Any, name: str, stored: str) -> TensorInfo:
        dtype = TENSOR_TYPES.get(int(t.Type()), f"type{int(t.Type())}")
        shape = tuple(int(d) for d in self.array(t.ShapeAsNumpy, t.ShapeLength(), "shape", 4))
        sig = None
        if t.ShapeSignatureLength():
            sig = tuple(int(d) for d in self.array(t.ShapeSignatureAsNumpy,
                                                    t.ShapeSignatureLength(), "signature", 4))
        has_rank = bool(t.HasRank()) or len(shape) > 0
        if schema.tensor_external_buffer(t) != 0:
            raise self.fail(f"tensor {stored!r} keeps its data in an external buffer file, "
                            "which is not supported")
        quant = None
        q = t.Quantization()
        if q is not None:
            scale = self.array(q.ScaleAsNumpy, q.ScaleLength(), "scale", 4).astype(np.float32)
            zp = self.array(q.ZeroPointAsNumpy, q.ZeroPointLength(), "zero_point", 8)
            zp = zp.astype(np.int64)
            details = None
            if int(q.DetailsType()) != 0:
                details = schema.QUANTIZATION_DETAILS.get(int(q.DetailsType()), "unknown")
            if scale.size or details:
                if zp.size == 0:
                    zp = np.zeros(scale.shape, np.int64)
                if zp.size != scale.size and scale.size:
                    if zp.size == 1:
                        zp = np.full(scale.shape, zp[0], np.int64)
                    else:
                        raise self.fail(f"tensor {stored!r} has {scale.size} scales and "
                                        f"{zp.size} zero points")
                quant = QuantInfo(_ro(scale), _ro(zp), int(q.QuantizedDimension()), details)
        sparsity = self.sparsity(t.Sparsity(), stored) if t.Sparsity() is not None else None
        return TensorInfo(i, name, stored, dtype, shape, sig, has_rank, int(t.Buffer()), quant,
                          sparsity, bool(t.IsVariable()))

    def sparsity(self, sp: Any, stored: str) -> SparsityInfo:
        order = tuple(int(v) for v in self.array(sp.TraversalOrderAsNumpy,
                                                  sp.TraversalOrderLength(), "traversal", 4))
        block = tuple(int(v) for v in self.array(sp.BlockMapAsNumpy, sp.BlockMapLength(),
                                                  "block_map", 4))
        levels = []
        for j in range(self.count(sp.DimMetadataLength(), "dim_metadata")):
            dm = sp.DimMetadata(j)
            if int(dm.Format()) == 0:
                levels.append(DimMeta("dense", int(dm.DenseSize())))
                continue
            segs = self.sparse_vector(dm.ArraySegmentsType(), dm.ArraySegments(), stored)
            idxs = self.sparse_vector(dm.ArrayIndicesType(), dm.ArrayIndices(), stored)
            levels.append(DimMeta("csr", 0, segs, idxs))
        return SparsityInfo(order, block, tuple(levels))

    def sparse_vector(self, kind: int, table: Any, stored: str) -> np.ndarray:
        cls = schema.sparse_vector_class(kind)
        elem = {1: 4, 2: 2, 3: 1}
        if table is None or cls is None:
            raise self.fail(f"tensor {stored!r}: sparse level without index vector")
        vec = cls()
        vec.Init(table.Bytes, table.Pos)
        return self.array(vec.ValuesAsNumpy, vec.ValuesLength(), "sparse index", elem[kind]
                          ).astype(np.int64)

    def tensor_value(self, info: TensorInfo) -> np.ndarray | None:
        raw = self.buffer_bytes(info.buffer, f"tensor {info.tensor_name!r}")
        if raw is None:
            return None
        what = f"tensor {info.tensor_name!r}"
        if info.dtype in ("int4", "uint4"):
            packed = np.asarray(raw, np.uint8)
            lo, hi = packed & 0x0F, packed >> 4
            vals = np.stack([lo, hi], axis=-1).reshape(-1).astype(np.int8)
            if info.dtype == "int4":
                vals = np.where(vals > 7, vals - 16, vals).astype(np.int8)
            flat = vals
            target = "int8"
        elif info.dtype == "bfloat16":
            if raw.size % 2:
                raise self.fail(f"{what}: bfloat16 buffer has an odd byte count")
            bits = np.frombuffer(raw.tobytes(), "<u2").astype(np.uint32) << 16
            flat, target = bits.view(np.float32), "float32"
        elif info.dtype in _NUMPY_READABLE:
            dt = np.dtype(info.dtype).newbyteorder("<")
            if raw.size % dt.itemsize:
                raise self.fail(f"{what}: buffer size {raw.size} is not a multiple of "
                                f"{dt.itemsize} ({info.dtype})")
            flat = np.frombuffer(raw, dt) if raw.base is not None else np.frombuffer(
                raw.tobytes(), dt)
            target = info.dtype
            if not dt.isnative:
                flat = flat.astype(info.dtype)
        else:
            self.warnings.append(f"{what} has data type {info.dtype}; its data is not read")
            return None
        count = int(np.prod(info.shape, dtype=np.int64))
        if info.sparsity is not None:
            return _ro(densify(np.asarray(flat), info.shape, info.sparsity, what, self.label))
        if info.dtype in ("int4", "uint4") and flat.size in (count + 1,) and count % 2:
            flat = flat[:count]
        if flat.size != count:
            raise self.fail(f"{what}: buffer holds {flat.size} {target} values, shape "
                            f"{list(info.shape)} needs {count}")
        return _ro(flat.reshape(info.shape))

    # -- operators -----------------------------------------------------------------------
    def operator(self, s: int, k: int, op: Any, tensors: list[TensorInfo]) -> TFLiteNode:
        idx = int(op.OpcodeIndex())
        if not 0 <= idx < len(self.opcodes):
            raise self.fail(f"operator {k} of subgraph {s} uses operator code {idx}, the model "
                            f"has {len(self.opcodes)}")
        code, custom, version = self.opcodes[idx]
        if code == CUSTOM_CODE:
            op_type, domain = custom or "", "custom"
        else:
            op_type, domain = schema.builtin_name(code), ""
        ins = [int(i) for i in self.array(op.InputsAsNumpy, op.InputsLength(), "inputs", 4)]
        outs = [int(i) for i in self.array(op.OutputsAsNumpy, op.OutputsLength(), "outputs", 4)]
        for i in ins + outs:
            if not -1 <= i < len(tensors):
                raise self.fail(f"operator {k} ({op_type}) of subgraph {s} refers to tensor "
                                f"{i}, the subgraph has {len(tensors)}")
        if any(i < 0 for i in outs):
            raise self.fail(f"operator {k} ({op_type}) has an output index -1")
        attrs = self.options(op, op_type, domain, k)
        if domain == "custom":
            attrs["custom_options"] = self.custom_options(op)
            attrs["custom_options_format"] = int(op.CustomOptionsFormat())
        inter = self.array(op.IntermediatesAsNumpy, op.IntermediatesLength(), "intermediates", 4)
        if len(inter):
            attrs["intermediates"] = tuple(int(i) for i in inter)
        out_infos = tuple(tensors[i] for i in outs)
        first = out_infos[0].tensor_name if out_infos else ""
        name = first or f"{op_type}_{k}"
        return TFLiteNode(op_type, domain, version, name,
                          tuple(tensors[i].name if i >= 0 else "" for i in ins),
                          tuple(t.name for t in out_infos), MappingProxyType(attrs), index=k,
                          input_infos=tuple(tensors[i] if i >= 0 else None for i in ins),
                          output_infos=out_infos, subgraph=s, settings=self.settings)

    def options(self, op: Any, op_type: str, domain: str, k: int) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        found = False
        for kind, table, names in ((int(op.BuiltinOptionsType()), op.BuiltinOptions(),
                                    OPTIONS_NAMES),
                                   (int(op.BuiltinOptions2Type()), op.BuiltinOptions2(),
                                    OPTIONS2_NAMES)):
            if kind == 0 or table is None:
                continue
            cls_name = names.get(kind)
            decoded = None if cls_name is None else schema.decode(cls_name, table)
            if decoded is None:
                self.warnings.append(f"operator {k} ({op_type}): unknown options type "
                                     f"{kind}{schema.unknown_options_note()}")
                continue
            attrs.update(decoded)
            found = True
        if not found and domain == "":
            cls_name = options_class_for(op_type)
            defaults = schema.defaults(cls_name) if cls_name else None
            if defaults is not None:
                attrs.update(defaults)
        return attrs

    def custom_options(self, op: Any) -> bytes:
        offset, size = int(op.LargeCustomOptionsOffset()), int(op.LargeCustomOptionsSize())
        if offset > 1:
            if offset + size > self.size:
                raise self.fail(f"custom options range offset={offset} size={size} lies "
                                "outside the file")
            return bytes(self.data[offset:offset + size])
        n = self.count(op.CustomOptionsLength(), "custom_options", 1)
        return bytes(op.CustomOptionsAsNumpy().tobytes()) if n else b""


def _ro(arr: np.ndarray) -> np.ndarray:
    if arr.flags.writeable:
        arr.setflags(write=False)
    return arr


# -- sparsity -----------------------------------------------------------------------------


def densify(values: np.ndarray, shape: Sequence[int], sp: SparsityInfo, what: str = "tensor",
            label: str = "") -> np.ndarray:
    """The dense tensor of a TFLite sparse constant (TACO-style format; tflite-mapping.md §5).
    Vectorised per level: positions and coordinates are carried as arrays."""
    shape = tuple(int(d) for d in shape)
    n = len(shape)
    order, bmap, levels = sp.traversal_order, sp.block_map, sp.dim_metadata
    k = len(bmap)
    if len(order) != n + k or len(levels) != n + k:
        raise InvalidModel(f"{label}: {what}: sparsity has {len(order)} traversal entries and "
                           f"{len(levels)} levels for rank {n} with {k} block dims")
    # positions of the current frontier and the coordinate per level
    pos = np.zeros(1, np.int64)
    coords: list[np.ndarray] = []
    for meta in levels:
        if meta.format == "dense":
            size = meta.dense_size
            if size < 0 or pos.size * max(size, 1) > 1 << 31:
                raise InvalidModel(f"{label}: {what}: sparse dense level size {size} too large")
            new_pos = (pos[:, None] * size + np.arange(size)[None, :]).reshape(-1)
            coords = [np.repeat(c, size) for c in coords]
            coords.append(np.tile(np.arange(size, dtype=np.int64), pos.size))
            pos = new_pos
        else:
            seg, idx = meta.segments, meta.indices
            assert seg is not None and idx is not None
            if pos.size and (pos.max() + 1 >= seg.size):
                raise InvalidModel(f"{label}: {what}: sparse segments too short")
            starts, ends = seg[pos], seg[pos + 1]
            counts = ends - starts
            if np.any(counts < 0) or (ends.size and ends.max() > idx.size):
                raise InvalidModel(f"{label}: {what}: sparse segments out of range")
            total = int(counts.sum())
            first = np.repeat(np.cumsum(counts) - counts, counts)
            new_pos = np.arange(total, dtype=np.int64) - first + np.repeat(starts, counts)
            new_pos = new_pos.astype(np.int64)
            coords = [np.repeat(c, counts) for c in coords]
            coords.append(idx[new_pos])
            pos = new_pos
    if pos.size != values.size or (pos.size and int(pos.max()) >= values.size):
        raise InvalidModel(f"{label}: {what}: sparse structure addresses {pos.size} values, "
                           f"the buffer holds {values.size}")
    orig = [np.zeros(pos.size, np.int64) for _ in range(n)]
    for level in range(n):
        orig[order[level]] = coords[level]
    for level in range(n, n + k):
        b = order[level] - n
        dim = bmap[b]
        block = levels[level].dense_size
        orig[dim] = orig[dim] * block + coords[level]
    dense = np.zeros(shape, values.dtype)
    for d in range(n):
        if orig[d].size and (orig[d].min() < 0 or orig[d].max() >= shape[d]):
            raise InvalidModel(f"{label}: {what}: sparse coordinates exceed shape {list(shape)}")
    dense[tuple(orig)] = values[pos]
    return dense


# -- public API ---------------------------------------------------------------------------


def _open(model: str | os.PathLike[str] | bytes | bytearray | memoryview) -> tuple[Any, str]:
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<bytes>"
    path = Path(model)
    if not path.is_file():
        raise InvalidModel(f"model file {str(path)!r} does not exist or is not a file")
    if path.stat().st_size == 0:
        raise InvalidModel(f"{path}: not a TFLite model (empty file)")
    with open(path, "rb") as fh:
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return data, str(path)


def read_model(model: str | os.PathLike[str] | bytes, *,
               settings: Mapping[str, Any] | None = None) -> TFLiteModel:
    """Parse a whole `.tflite` file (every subgraph); InvalidModel when it is malformed."""
    data, label = _open(model)
    reader = _Reader(data, label, settings or {})
    try:
        return reader.read()
    except InvalidModel:
        raise
    except (struct.error, IndexError, ValueError, TypeError, OverflowError, AttributeError,
            RecursionError, MemoryError) as exc:
        raise InvalidModel(f"{label} is not a valid TFLite model (truncated or corrupt "
                           f"flatbuffer: {type(exc).__name__}: {exc})") from exc


def _signature_maps(model: str | os.PathLike[str] | bytes, signature: str | None
                    ) -> tuple[TFLiteModel, SignatureDef | None]:
    probe = read_model(model)
    if signature is None:
        return probe, None
    for sig in probe.signatures:
        if sig.key == signature:
            return probe, sig
    keys = [s.key for s in probe.signatures]
    raise InvalidModel(f"{probe.label} has no signature {signature!r} (signatures: {keys})")


def read_tflite(model: str | os.PathLike[str] | bytes, *, signature: str | None = None,
                input_shapes: Mapping[str, Sequence[int]] | None = None,
                settings: Mapping[str, Any] | None = None,
                input_dims: InputDims | None = None) -> TFLiteSourceGraph:
    """Read a `.tflite` model into a `TFLiteSourceGraph` for the importer.

    Without `signature` the main subgraph (0) is converted and inputs/outputs are named by
    their tensor names; with `signature`, that SignatureDef's subgraph with its aliases.
    Dynamic (-1) input dimensions default to the stored shape (see the module docstring);
    `input_dims` sets single dimensions by input name and axis, `input_shapes` whole shapes
    (also of inputs of unknown rank) by input name.
    `settings` are passed to handlers through `TFLiteNode.settings`.
    """
    if isinstance(model, (bytearray, memoryview)):
        model = bytes(model)
    probe, sig = _signature_maps(model, signature)
    opts = dict(settings or {})
    index = 0
    if sig is not None:
        index = sig.subgraph_index
        aliases = {t: n for n, t in sig.inputs + sig.outputs if n}
        opts["signature_map"] = {index: aliases}
        tfm = read_model(model, settings=opts)
    else:
        tfm = probe if not opts else read_model(model, settings=opts)
    sub = tfm.subgraphs[index]
    label = tfm.label
    consts = dict(tfm.constants[index])

    declared = [sub.tensors[i] for i in sub.inputs]
    inputs, notes = _resolve_inputs(declared, dict(input_shapes or {}), dict(input_dims or {}),
                                    label)
    outputs = []
    for i in sub.outputs:
        t = sub.tensors[i]
        outputs.append(ValueInfo(t.name, t.dtype, _declared(t), _declared(t)))
    tensors = {t.name: t for t in sub.tensors}
    return TFLiteSourceGraph(
        sub.name or (sig.key if sig else "main"), tuple(inputs), tuple(outputs), sub.nodes,
        MappingProxyType(consts), MappingProxyType({"tflite": tfm.version}),
        source_format="tflite", producer=tfm.description, warnings=tfm.warnings + notes,
        model=tfm,
        subgraph_index=index, tensors=MappingProxyType(tensors),
        signature=sig.key if sig else None)


def _declared(t: TensorInfo) -> tuple[int | None, ...] | None:
    if not t.has_rank and not t.shape:
        return None
    dims = t.shape_signature if t.shape_signature is not None else t.shape
    return tuple(None if d < 0 else int(d) for d in dims)


def stored_sizes(t: TensorInfo) -> dict[int, int]:
    """The sizes LiteRT runs the dynamic (-1) dimensions of input `t` at: the stored `shape`
    entry of each, where the shape has the signature's rank and the entry is >= 1."""
    want = _declared(t)
    if want is None or len(t.shape) != len(want):
        return {}
    return {i: int(t.shape[i]) for i, d in enumerate(want) if d is None and t.shape[i] >= 1}


def _resolve_inputs(declared: list[TensorInfo], input_shapes: Mapping[str, Sequence[int]],
                    input_dims: InputDims, label: str) -> tuple[list[ValueInfo], tuple[str, ...]]:
    """Static input shapes and the report notes on the dynamic dimensions given their stored
    size (see the module docstring)."""
    names = [t.name for t in declared]
    unknown = sorted(set(input_shapes) - set(names))
    if unknown:
        raise InvalidModel(f"shape(s) given for {unknown}, which are not inputs of {label} "
                           f"(inputs: {names})")
    ranks = {t.name: None if (w := _declared(t)) is None else len(w) for t in declared}
    axes = check_input_dims(input_dims, ranks, label, shapes_given=input_shapes)
    out: list[ValueInfo] = []
    unresolved: list[str] = []
    missing: set[tuple[str, int | None]] = set()
    defaults: list[Fix] = []
    for t in declared:
        want = _declared(t)
        if t.name in input_shapes:
            shape = tuple(int(d) for d in input_shapes[t.name])
            if any(d < 1 for d in shape):
                raise InvalidModel(f"the shape given for input {t.name!r}, {list(shape)}, has "
                                   "a dimension < 1")
            if want is not None:
                if len(shape) != len(want):
                    raise InvalidModel(f"the shape given for input {t.name!r} has rank "
                                       f"{len(shape)}, the model declares rank {len(want)}")
                for i, (w, g) in enumerate(zip(want, shape, strict=True)):
                    if w is not None and w != g:
                        raise InvalidModel(f"the shape given for input {t.name!r} sets axis "
                                           f"{i} to {g}, which contradicts the model's fixed "
                                           f"dimension {w}")
            out.append(ValueInfo(t.name, t.dtype, shape, want))
            continue
        if want is None:
            unresolved.append(f"{t.name}: unknown rank")
            missing.add((t.name, None))
            out.append(ValueInfo(t.name, t.dtype, None, None))
            continue
        stored = stored_sizes(t)
        dims: list[int] = []
        for i, d in enumerate(want):
            given = axes.get(t.name, {}).get(i)
            if given is not None:
                if d is not None and d != given:
                    raise InvalidModel(f"dimension {t.name}:{i} = {given} contradicts the "
                                       f"model's fixed dimension {d}")
                dims.append(given)
            elif d is not None:
                dims.append(d)
            elif i in stored:
                dims.append(stored[i])
                defaults.append(Fix("input_dims", t.name, axis=i, value=stored[i]))
            else:
                unresolved.append(f"{t.name}[{i}] (dynamic, -1, no stored size)")
                missing.add((t.name, i))
                dims.append(-1)
        out.append(ValueInfo(t.name, t.dtype, tuple(dims), want))
    if unresolved:
        raise UnresolvedDimensions(
            f"{len(unresolved)} input dimension(s) of {label} are not fixed: "
            + ", ".join(unresolved),
            fixes=fixes_for([(t.name, _declared(t)) for t in declared], missing))
    return out, _default_notes(defaults)


def _default_notes(defaults: Sequence[Fix]) -> tuple[str, ...]:
    if not defaults:
        return ()
    used = ", ".join(f"{f.name}[{f.axis}]={f.value}" for f in defaults)
    other = [Fix("input_dims", f.name, axis=f.axis) for f in defaults]
    return (f"dynamic (-1) input dimension(s) converted at the stored size LiteRT runs them "
            f"at: {used}; set other sizes with {render_fixes(other, 'cli')} (command line) "
            f"or {render_fixes(other, 'python')} (Python)",)
