"""TFLite (LiteRT) reader: a `.tflite` flatbuffer -> `TFLiteModel` and a `SourceGraph`.

What it does:
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
  sparse constants (`Tensor.sparsity`) are densified here (`sparsity`), so DENSIFY is a
  pure pass-through;
- shapes (`inputs`): a -1 in the `shape_signature` of a graph input is converted at the
  stored `shape` size, as LiteRT does (its `get_input_details()["shape"]`, the size it
  allocates and runs at), with a warning in the conversion report; `input_dims` (by input
  name and axis) and `input_shapes` (whole shapes by input name) set other sizes. Unknown
  ranks and -1 dims without a stored size must be set; one `UnresolvedDimensions` error
  lists all of them;
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
The structure the importer relies on is checked here too, as LiteRT runs operators in file
order: every tensor an operator reads is defined before it (a subgraph input, a constant, a
variable or an earlier operator's output), and so is every subgraph output; an operator's
options table is its op's own type (`tables.options_class_for`); strides, dilations and
pooling windows are at least 1 and a padding is SAME or VALID. (Input/output counts per op
are checked by the importer: `op_mappings/tflite/_checks.py`.)

The records it returns live in `records`, the schema tables in `tables` (options decoding in
`options`); this module re-exports the records.

Restrictions: external buffer files (`Tensor.external_buffer`) are rejected; string,
complex, resource and variant tensors are kept as dtype names without data conversion.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import tflite

from converter.core.budgets import active, nbytes
from converter.core.errors import InvalidModel
from converter.core.ir import ValueInfo
from converter.frontends.base import read_model_file
from converter.frontends.free_dims import InputDims
from converter.frontends.tflite import options as schema
from converter.frontends.tflite.inputs import declared_shape, resolve_inputs, stored_sizes
from converter.frontends.tflite.options import OPTIONS2_NAMES, OPTIONS_NAMES
from converter.frontends.tflite.records import (
    DimMeta,
    QuantInfo,
    SignatureDef,
    SparsityInfo,
    TensorInfo,
    TFLiteModel,
    TFLiteNode,
    TFLiteSourceGraph,
    TFLiteSubgraph,
)
from converter.frontends.tflite.sparsity import densify
from converter.frontends.tflite.tables import (
    CUSTOM_CODE,
    NUMPY_READABLE,
    TENSOR_TYPES,
    options_class_for,
)

__all__ = ["DimMeta", "QuantInfo", "SignatureDef", "SparsityInfo", "TFLiteModel", "TFLiteNode",
           "TFLiteSourceGraph", "TFLiteSubgraph", "TensorInfo", "densify", "read_model",
           "read_tflite", "stored_sizes"]


# -- reading ------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: Any, label: str, settings: Mapping[str, Any]) -> None:
        self.data = data
        self.size = len(data)
        self.label = label
        self.settings = MappingProxyType(dict(settings))
        self.warnings: list[str] = []
        given = active()
        self.budgets = given if given.source_bytes is not None else given.for_source(self.size)
        """The active budgets, knowing the file's size (derived constants: densified
        sparse tensors, zero-filled variables are bounded relative to it)."""

    def fail(self, message: str) -> InvalidModel:
        return InvalidModel(f"{self.label}: {message}")

    def count(self, n: int, what: str, elem: int = 4) -> int:
        if n < 0 or n * elem > self.size:
            raise self.fail(f"{what} claims {n} entries, more than the file can hold")
        return n

    def array(self, getter: Any, length: int, what: str, elem: int) -> np.ndarray:
        self.count(length, what, elem)
        value: np.ndarray | int = getter()  # flatbuffers' `...AsNumpy()`: 0 when absent
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
            elif info.is_variable and i not in inputs and info.dtype in NUMPY_READABLE:
                self.budgets.check("max_constant_bytes",  # before allocating the zeros
                               nbytes(info.shape, np.dtype(info.dtype).itemsize),
                               f"{self.label}: the variable tensor {info.tensor_name!r} "
                               "would start as zeros of")
                consts[info.name] = _ro(np.zeros(info.shape, info.dtype))
                self.warnings.append(f"variable tensor {info.tensor_name!r} starts as zeros")
        nodes = []
        for k in range(self.count(sg.OperatorsLength(), f"subgraph {s} operators")):
            nodes.append(self.operator(s, k, sg.Operators(k), tensors))
        defined = {i for i, t in enumerate(tensors) if t.name in consts} | set(inputs)
        self.check_defined(s, nodes, tensors, outputs, defined)
        name = (sg.Name() or b"").decode("utf-8", "replace")
        return TFLiteSubgraph(s, name, tuple(tensors), inputs, outputs, tuple(nodes)), consts

    def check_defined(self, s: int, nodes: Sequence[TFLiteNode], tensors: Sequence[TensorInfo],
                      outputs: tuple[int, ...], defined: set[int]) -> None:
        """Every tensor an operator reads is defined before it (a subgraph input, a constant,
        a variable or an earlier operator's output), and so is every subgraph output:
        LiteRT runs the operators in file order."""
        for node in nodes:
            for info in node.input_infos:
                if info is not None and info.index not in defined:
                    raise self.fail(f"operator {node.index} ({node.op_type}) of subgraph {s} "
                                    f"reads tensor {info.index} ({info.tensor_name!r}"
                                    f"{_unread(info)}), which no earlier operator, subgraph "
                                    "input or constant defines")
            defined.update(t.index for t in node.output_infos)
        for i in outputs:
            if i not in defined:
                raise self.fail(f"subgraph {s} output tensor {i} ({tensors[i].tensor_name!r}"
                                f"{_unread(tensors[i])}) is not defined by any operator, "
                                "subgraph input or constant")

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
        elif info.dtype in NUMPY_READABLE:
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
            return _ro(densify(np.asarray(flat), info.shape, info.sparsity, what, self.label,
                               self.budgets))
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
        bad = _bad_option(attrs)
        if bad:
            raise self.fail(f"operator {k} ({op_type}) of subgraph {s}: {bad}")
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
        expected = options_class_for(op_type) if domain == "" else None
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
            if expected is not None and cls_name != expected:
                raise self.fail(f"operator {k} ({op_type}) carries options {cls_name}, not "
                                f"{expected}")
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


_AT_LEAST_ONE = ("stride_h", "stride_w", "stride_d", "dilation_h_factor",
                 "dilation_w_factor", "dilation_d_factor", "filter_height", "filter_width")


def _bad_option(attrs: Mapping[str, Any]) -> str | None:
    """What is wrong with decoded options whose values no kernel accepts: strides,
    dilations and pooling windows below 1, a padding that is neither SAME (0) nor VALID
    (1); None when nothing is."""
    for key in _AT_LEAST_ONE:
        value = attrs.get(key)
        if isinstance(value, int) and value < 1:
            return f"option {key} is {value}, it must be at least 1"
    padding = attrs.get("padding")
    if isinstance(padding, int) and padding not in (0, 1):
        return f"option padding is {padding}, neither SAME (0) nor VALID (1)"
    return None


def _unread(info: TensorInfo) -> str:
    """What to add when a tensor with data is not a constant: its data type is not read."""
    return f", {info.dtype} data that is not read" if info.buffer and (
        info.dtype not in NUMPY_READABLE and info.dtype not in ("int4", "uint4", "bfloat16")
    ) else ""


def _ro(arr: np.ndarray) -> np.ndarray:
    if arr.flags.writeable:
        arr.setflags(write=False)
    return arr


# -- public API ---------------------------------------------------------------------------


def _open(model: str | os.PathLike[str] | bytes | bytearray | memoryview) -> tuple[Any, str]:
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<bytes>"
    path = Path(model)
    data = read_model_file(path)
    if not data:
        raise InvalidModel(f"{path}: not a TFLite model (empty file)")
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
            RecursionError) as exc:
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
    inputs, notes = resolve_inputs(declared, dict(input_shapes or {}), dict(input_dims or {}),
                                    label)
    outputs = []
    for i in sub.outputs:
        t = sub.tensors[i]
        outputs.append(ValueInfo(t.name, t.dtype, declared_shape(t), declared_shape(t)))
    tensors = {t.name: t for t in sub.tensors}
    return TFLiteSourceGraph(
        sub.name or (sig.key if sig else "main"), tuple(inputs), tuple(outputs), sub.nodes,
        MappingProxyType(consts), MappingProxyType({"tflite": tfm.version}),
        source_format="tflite", producer=tfm.description, warnings=tfm.warnings + notes,
        model=tfm,
        subgraph_index=index, tensors=MappingProxyType(tensors),
        signature=sig.key if sig else None)
