"""Reading the tensors of a TFLite subgraph: `TensorInfo` records (stored shape, quantization,
sparsity) and constant values.

Constants are read-only views of the file (memory-mapped for paths); INT4 constants are
unpacked to int8 (low nibble first), bfloat16 to float32; sparse constants are densified
(`sparsity`), so DENSIFY is a pure pass-through.

Restrictions: external buffer files (`Tensor.external_buffer`) are rejected; string,
complex, resource and variant tensors are kept as dtype names without data conversion.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Quantization, SparseDimension, Sparsity, TensorInfo
from converter.frontends.tflite import options as schema
from converter.frontends.tflite.model_file import ModelFile, read_only
from converter.frontends.tflite.sparsity import densify
from converter.frontends.tflite.tables import NUMPY_READABLE, TENSOR_TYPES


def read_tensor(f: ModelFile, i: int, t: Any, name: str, stored: str) -> TensorInfo:
    """Tensor `i` (accessor `t`) of a subgraph, named `name` in the SourceGraph and `stored`
    in the file."""
    dtype = TENSOR_TYPES.get(int(t.Type()), f"type{int(t.Type())}")
    shape = tuple(int(d) for d in f.array(t.ShapeAsNumpy, t.ShapeLength(), "shape", 4))
    sig = None
    if t.ShapeSignatureLength():
        sig = tuple(int(d) for d in f.array(t.ShapeSignatureAsNumpy,
                                             t.ShapeSignatureLength(), "signature", 4))
    has_rank = bool(t.HasRank()) or len(shape) > 0
    if schema.tensor_external_buffer(t) != 0:
        raise f.fail(f"tensor {stored!r} keeps its data in an external buffer file, "
                     "which is not supported")
    quant = None
    q = t.Quantization()
    if q is not None:
        scale = f.array(q.ScaleAsNumpy, q.ScaleLength(), "scale", 4).astype(np.float32)
        zp = f.array(q.ZeroPointAsNumpy, q.ZeroPointLength(), "zero_point", 8)
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
                    raise f.fail(f"tensor {stored!r} has {scale.size} scales and "
                                 f"{zp.size} zero points")
            quant = Quantization(read_only(scale), read_only(zp), int(q.QuantizedDimension()),
                                 details)
    sparsity = _sparsity(f, t.Sparsity(), stored) if t.Sparsity() is not None else None
    return TensorInfo(i, name, stored, dtype, shape, sig, has_rank, int(t.Buffer()), quant,
                      sparsity, bool(t.IsVariable()))


def _sparsity(f: ModelFile, sp: Any, stored: str) -> Sparsity:
    order = tuple(int(v) for v in f.array(sp.TraversalOrderAsNumpy,
                                           sp.TraversalOrderLength(), "traversal", 4))
    block = tuple(int(v) for v in f.array(sp.BlockMapAsNumpy, sp.BlockMapLength(),
                                           "block_map", 4))
    levels = []
    for j in range(f.count(sp.DimMetadataLength(), "dim_metadata")):
        dm = sp.DimMetadata(j)
        if int(dm.Format()) == 0:
            levels.append(SparseDimension("dense", int(dm.DenseSize())))
            continue
        segs = _sparse_vector(f, dm.ArraySegmentsType(), dm.ArraySegments(), stored)
        idxs = _sparse_vector(f, dm.ArrayIndicesType(), dm.ArrayIndices(), stored)
        levels.append(SparseDimension("csr", 0, segs, idxs))
    return Sparsity(order, block, tuple(levels))


def _sparse_vector(f: ModelFile, kind: int, table: Any, stored: str) -> np.ndarray:
    cls = schema.sparse_vector_class(kind)
    elem = {1: 4, 2: 2, 3: 1}
    if table is None or cls is None:
        raise f.fail(f"tensor {stored!r}: sparse level without index vector")
    vec = cls()
    vec.Init(table.Bytes, table.Pos)
    return f.array(vec.ValuesAsNumpy, vec.ValuesLength(), "sparse index", elem[kind]
                   ).astype(np.int64)


def tensor_value(f: ModelFile, info: TensorInfo) -> np.ndarray | None:
    """The constant value of a tensor with data (None without data, or when its data type is
    not read: a warning says so)."""
    raw = f.buffer_bytes(info.buffer, f"tensor {info.tensor_name!r}")
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
            raise f.fail(f"{what}: bfloat16 buffer has an odd byte count")
        bits = np.frombuffer(raw.tobytes(), "<u2").astype(np.uint32) << 16
        flat, target = bits.view(np.float32), "float32"
    elif info.dtype in NUMPY_READABLE:
        dt = np.dtype(info.dtype).newbyteorder("<")
        if raw.size % dt.itemsize:
            raise f.fail(f"{what}: buffer size {raw.size} is not a multiple of "
                         f"{dt.itemsize} ({info.dtype})")
        flat = np.frombuffer(raw, dt) if raw.base is not None else np.frombuffer(
            raw.tobytes(), dt)
        target = info.dtype
        if not dt.isnative:
            flat = flat.astype(info.dtype)
    else:
        f.warnings.append(f"{what} has data type {info.dtype}; its data is not read")
        return None
    count = int(np.prod(info.shape, dtype=np.int64))
    if info.sparsity is not None:
        return read_only(densify(np.asarray(flat), info.shape, info.sparsity, what, f.label,
                                 f.budgets))
    if info.dtype in ("int4", "uint4") and flat.size in (count + 1,) and count % 2:
        flat = flat[:count]
    if flat.size != count:
        raise f.fail(f"{what}: buffer holds {flat.size} {target} values, shape "
                     f"{list(info.shape)} needs {count}")
    return read_only(flat.reshape(info.shape))


def unread_note(info: TensorInfo) -> str:
    """What to add when a tensor with data is not a constant: its data type is not read."""
    return f", {info.dtype} data that is not read" if info.buffer and (
        info.dtype not in NUMPY_READABLE and info.dtype not in ("int4", "uint4", "bfloat16")
    ) else ""
