"""TFLite mutations: field-aware edits through LiteRT's flatbuffer object API (unpack,
change, pack: shapes, types, buffer indices / sizes / offsets, opcode indices and codes,
versions, operator and subgraph inputs/outputs, builtin options, subgraph indices of
control-flow ops, quantization, names, signatures, custom options), and byte-level edits at
the positions of table fields and vtable entries found by walking the flatbuffer (Model,
SubGraph, Tensor, Operator, OperatorCode, Buffer tables). Without LiteRT's schema only the
byte-level edits run (the walk uses the `tflite` package then)."""

from __future__ import annotations

import random
import struct
from typing import Any

from tools.fuzz.mutators.base import Mutation, StructMutator, apply_some
from tools.fuzz.mutators.common import evil_float, evil_int, evil_string, mutate_bytes

I32 = [0, -1, -2, 1, 2, 3, 127, 128, 255, 65536, 1 << 20, 2**31 - 1, -2**31]
U32 = [0, 1, 2, 3, 255, 65535, 2**31 - 1, 2**31, 2**32 - 1]


def schema() -> Any | None:
    try:
        from ai_edge_litert import schema_py_generated
    except ImportError:
        return None
    return schema_py_generated


# -- object-level mutators (ModelT) ---------------------------------------------------------
# The object API keeps numeric vectors as numpy arrays (None when absent): `_list` them.


def _list(value: Any) -> list[Any]:
    return [] if value is None else [v.item() if hasattr(v, "item") else v for v in value]


def _tensors(m: Any) -> list[tuple[Any, Any]]:
    return [(sg, t) for sg in (m.subgraphs or []) for t in (sg.tensors or [])]


def _ops(m: Any) -> list[tuple[Any, Any]]:
    return [(sg, o) for sg in (m.subgraphs or []) for o in (sg.operators or [])]


def shape(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ts = _tensors(m)
    if not ts:
        return None
    _, t = rng.choice(ts)
    field = "shapeSignature" if rng.random() < 0.2 else "shape"
    dims = _list(getattr(t, field))
    how = rng.choice(["dim", "dim", "drop", "add", "empty", "huge", "rank"])
    if how == "dim" and dims:
        dims[rng.randrange(len(dims))] = rng.choice(I32)
    elif how == "drop" and dims:
        dims.pop()
    elif how == "empty":
        dims = []
    elif how == "huge":
        dims = [2**31 - 1, 2**31 - 1]
    elif how == "rank":
        dims = [1] * rng.choice([7, 9, 64])
    else:
        dims.append(rng.choice([0, 1, 3]))
    setattr(t, field, dims)
    return f"{field}:{how}"


def ttype(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ts = _tensors(m)
    if not ts:
        return None
    _, t = rng.choice(ts)
    t.type = rng.choice([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                         19, 20, 21, 22, 30, 127])
    return str(t.type)


def buffer_index(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ts = _tensors(m)
    if not ts:
        return None
    _, t = rng.choice(ts)
    nbuf = len(m.buffers or [])
    t.buffer = rng.choice([0, nbuf, nbuf + 100, 2**32 - 1, rng.randrange(max(nbuf, 1))])
    return str(t.buffer)


def buffer_data(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    bufs = [b for b in (m.buffers or []) if len(_list(b.data))]
    if not bufs:
        return None
    b = rng.choice(bufs)
    data = _list(b.data)
    how = rng.choice(["truncate", "truncate", "extend", "empty", "odd"])
    if how == "truncate":
        data = data[:len(data) // 2]
    elif how == "extend":
        data += [0] * rng.choice([1, 4, 4096])
    elif how == "empty":
        data = []
    else:
        data = data[:-1]
    b.data = data
    return how


def buffer_offset(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    """Buffers stored after the flatbuffer (`offset`/`size`, large models)."""
    bufs = list(m.buffers or [])
    if not bufs:
        return None
    b = rng.choice(bufs)
    b.offset = rng.choice([1, 8, 2**31, 2**63, 2**64 - 1])
    b.size = rng.choice([0, 4, 2**32, 2**63, 2**64 - 1])
    if rng.random() < 0.5:
        b.data = None
    return f"offset={b.offset} size={b.size}"


def opcode_index(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ops = _ops(m)
    if not ops:
        return None
    _, o = rng.choice(ops)
    n = len(m.operatorCodes or [])
    o.opcodeIndex = rng.choice([n, n + 1, 2**32 - 1, rng.randrange(max(n, 1))])
    return str(o.opcodeIndex)


def opcode(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    codes = list(m.operatorCodes or [])
    if not codes:
        return None
    oc = rng.choice(codes)
    how = rng.choice(["builtin", "deprecated", "version", "custom"])
    if how == "builtin":
        oc.builtinCode = rng.choice([-1, 0, 32, 53, 99, 127, 150, 206, 210, 255, 10000])
        oc.deprecatedBuiltinCode = min(max(oc.builtinCode, -128), 127)
    elif how == "deprecated":
        oc.deprecatedBuiltinCode = rng.choice([-128, -1, 0, 32, 126, 127])
    elif how == "version":
        oc.version = rng.choice(I32)
    else:
        oc.builtinCode, oc.deprecatedBuiltinCode = 32, 32
        oc.customCode = evil_string(rng)
    return how


def op_io(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ops = _ops(m)
    if not ops:
        return None
    sg, o = rng.choice(ops)
    which = rng.choice(["inputs", "outputs", "intermediates"])
    seq = _list(getattr(o, which))
    n = len(sg.tensors or [])
    how = rng.choice(["index", "index", "drop", "add", "empty", "self"])
    if how == "index" and seq:
        seq[rng.randrange(len(seq))] = rng.choice([-1, -2, n, n + 5, 2**31 - 1, -2**31])
    elif how == "drop" and seq:
        seq.pop()
    elif how == "empty":
        seq = []
    elif how == "self" and len(_list(o.inputs)) and len(_list(o.outputs)):
        seq = _list(o.inputs)  # an op reading its own output
        seq[0] = _list(o.outputs)[0]
        which = "inputs"
    else:
        seq.append(rng.choice([-1, 0, n - 1]))
    setattr(o, which, seq)
    return f"{which}:{how}"


def subgraph_io(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    sgs = list(m.subgraphs or [])
    if not sgs:
        return None
    sg = rng.choice(sgs)
    which = rng.choice(["inputs", "outputs"])
    seq = _list(getattr(sg, which))
    how = rng.choice(["index", "drop", "dup", "empty"])
    if how == "index" and seq:
        seq[0] = rng.choice([-1, len(sg.tensors or []), 2**31 - 1])
    elif how == "drop" and seq:
        seq.pop()
    elif how == "dup" and seq:
        seq.append(seq[0])
    else:
        seq = []
    setattr(sg, which, seq)
    return f"{which}:{how}"


def subgraphs(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    sgs = list(m.subgraphs or [])
    how = rng.choice(["drop-main", "dup", "empty-ops", "reverse-ops"])
    if how == "drop-main" and len(sgs) > 1:
        m.subgraphs = sgs[1:]
    elif how == "dup" and sgs:
        m.subgraphs = sgs + [sgs[0]]
    elif how == "empty-ops" and sgs:
        sgs[0].operators = []
    elif how == "reverse-ops" and sgs and sgs[0].operators:
        sgs[0].operators = list(reversed(sgs[0].operators))
    else:
        m.subgraphs = []
    return how


def _option_fields(opts: Any) -> list[str]:
    return [k for k, v in vars(opts).items()
            if isinstance(v, (bool, int, float, list)) or hasattr(v, "tolist")]


def options(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ops = [o for _, o in _ops(m) if o.builtinOptions is not None]
    if not ops:
        return None
    o = rng.choice(ops)
    opts = o.builtinOptions
    if rng.random() < 0.2:
        o.builtinOptionsType = rng.choice([0, 1, 2, 3, 10, 17, 50, 90, 126, 200])
        return f"{type(opts).__name__}:type={o.builtinOptionsType}"
    fields = _option_fields(opts)
    if not fields:
        return None
    name = rng.choice(fields)
    value = getattr(opts, name)
    if name.endswith("SubgraphIndex"):
        setattr(opts, name, rng.choice([0, -1, len(m.subgraphs or []), 2**31 - 1]))
    elif isinstance(value, bool):
        setattr(opts, name, not value)
    elif isinstance(value, int):
        setattr(opts, name, rng.choice([-1, 0, 2, 127, -128]) if rng.random() < 0.5
                else rng.choice(I32))
    elif isinstance(value, float):
        setattr(opts, name, rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e-30]))
    else:
        setattr(opts, name, rng.choice([[], [rng.choice(I32)], _list(value) * 100]))
    return f"{type(opts).__name__}.{name}"


def quantization(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    S = schema()
    ts = _tensors(m)
    if not ts or S is None:
        return None
    _, t = rng.choice(ts)
    q = t.quantization or S.QuantizationParametersT()
    t.quantization = q
    how = rng.choice(["scale", "zp", "dim", "mismatch", "minmax"])
    if how == "scale":
        q.scale = rng.choice([[], [0.0], [float("nan")], [float("inf")], [-1.0],
                              [1e-45], [1.0] * 1000])
    elif how == "zp":
        q.zeroPoint = [evil_int(rng)] * max(1, len(_list(q.scale)))
    elif how == "dim":
        q.quantizedDimension = rng.choice([-1, 4, 99, 2**31 - 1])
    elif how == "mismatch":
        q.scale, q.zeroPoint = [0.5, 0.25, 0.125], [0]
    else:
        q.min, q.max = [evil_float(rng)], [evil_float(rng)]
    return how


def tflite_names(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    how = rng.choice(["tensor", "subgraph", "description", "signature"])
    ts = _tensors(m)
    if how == "tensor" and ts:
        rng.choice(ts)[1].name = evil_string(rng)
    elif how == "subgraph" and m.subgraphs:
        m.subgraphs[0].name = evil_string(rng)
    elif how == "signature" and m.signatureDefs:
        sig = m.signatureDefs[0]
        sig.signatureKey = evil_string(rng)
        if sig.inputs:
            sig.inputs[0].name = evil_string(rng)
    else:
        m.description = evil_string(rng)
    return how


def signature(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    if not m.signatureDefs:
        return None
    sig = rng.choice(m.signatureDefs)
    how = rng.choice(["subgraph", "tensor", "drop"])
    if how == "subgraph":
        sig.subgraphIndex = rng.choice([1, 99, 2**32 - 1])
    elif how == "tensor" and (sig.inputs or sig.outputs):
        (sig.inputs or sig.outputs)[0].tensorIndex = rng.choice([99999, 2**32 - 1])
    else:
        sig.inputs = []
    return how


def version(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    m.version = rng.choice([0, 1, 2, 4, 99, 2**32 - 1])
    return str(m.version)


def custom_options(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ops = _ops(m)
    if not ops:
        return None
    _, o = rng.choice(ops)
    how = rng.choice(["bytes", "large"])
    if how == "bytes":
        o.customOptions = [rng.randrange(256) for _ in range(rng.choice([1, 16, 300]))]
        o.customOptionsFormat = rng.choice([0, 1, 5])
    else:
        o.largeCustomOptionsOffset = rng.choice([1, 2**40, 2**64 - 1])
        o.largeCustomOptionsSize = rng.choice([1, 2**40, 2**64 - 1])
    return how


def dup_ops(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    ops = _ops(m)
    if not ops:
        return None
    sg, o = rng.choice(ops)
    sg.operators = list(sg.operators) + [o] * rng.choice([2, 50, 3000])
    return str(len(sg.operators))


BIG_DIMS = [[16384, 16384], [8192, 8192], [65536, 65536], [1 << 20, 4096], [100_000, 21_000]]
"""Shapes asking for 256 MiB to 16 GiB of float32 from a few bytes of file."""


def _sparsity(S: Any, levels: list[int], csr: bool) -> Any:
    """Sparsity parameters of dense levels of `levels` sizes (the last one CSR over one
    value when `csr`)."""
    sp = S.SparsityParametersT()
    sp.traversalOrder, sp.blockMap = list(range(len(levels))), []
    dims = []
    for i, size in enumerate(levels):
        d = S.DimensionMetadataT()
        if csr and i == len(levels) - 1:
            d.format = 1
            for attr, values in (("arraySegments", [0, 1]), ("arrayIndices", [0])):
                vec = S.Int32VectorT()
                vec.values = values
                setattr(d, attr + "Type", S.SparseIndexVector.Int32Vector)
                setattr(d, attr, vec)
        else:
            d.format, d.denseSize = 0, size
        dims.append(d)
    sp.dimMetadata = dims
    return sp


def amplify(m: Any, rng: random.Random, mut: Mutation) -> str | None:
    """A few bytes that ask for gigabytes: a tensor made a variable (zero-filled when read)
    of a big shape, a constant given a big dense shape through sparsity parameters, or
    sparsity whose dense level sizes are far larger than the tensor's shape."""
    S = schema()
    ts = _tensors(m)
    if S is None or not ts:
        return None
    _, t = rng.choice(ts)
    dims = rng.choice(BIG_DIMS)
    how = rng.choice(["variable", "sparse-shape", "sparse-levels"])
    if how == "variable":
        t.isVariable, t.buffer, t.shape = True, 0, list(dims)
    elif how == "sparse-shape":
        t.shape = list(dims)
        t.sparsity = _sparsity(S, [1, dims[1]], csr=True)
        buf = S.BufferT()
        buf.data = [0, 0, 128, 63]  # one float32 1.0 (four int8 values)
        m.buffers = list(m.buffers or []) + [buf]
        t.buffer = len(m.buffers) - 1
    else:
        rank = max(len(_list(t.shape)), 1)
        t.sparsity = _sparsity(S, [rng.choice([1 << 16, 1 << 20, 3 << 20])] * rank, csr=False)
    return f"{how}:{dims}"


MUTATORS: list[tuple[str, StructMutator]] = [
    ("shape", shape), ("shape", shape), ("type", ttype), ("buffer-index", buffer_index),
    ("buffer-data", buffer_data), ("buffer-data", buffer_data),
    ("buffer-offset", buffer_offset), ("opcode-index", opcode_index), ("opcode", opcode),
    ("op-io", op_io), ("op-io", op_io), ("subgraph-io", subgraph_io),
    ("subgraphs", subgraphs), ("options", options), ("options", options),
    ("quantization", quantization), ("names", tflite_names), ("signature", signature),
    ("version", version), ("custom-options", custom_options), ("dup-ops", dup_ops),
    ("amplify", amplify),
]


def _pack(S: Any, model: Any) -> bytes:
    import flatbuffers

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


# -- byte level at table fields ---------------------------------------------------------------


def field_positions(data: bytes) -> list[tuple[int, int]]:
    """(position, width hint) of the fields and vtable entries of the Model, SubGraph,
    Tensor, Operator, OperatorCode and Buffer tables (at most a few hundred)."""
    reader: Any = schema()
    if reader is None:
        import tflite

        reader = tflite
    buf = bytearray(data)
    out: list[tuple[int, int]] = []

    def table(obj: Any) -> None:
        tab = obj._tab
        pos = tab.Pos
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        vsize = struct.unpack_from("<H", buf, vt)[0]
        out.append((vt, 2))
        for slot in range(4, min(vsize, 64), 2):
            out.append((vt + slot, 2))
            off = struct.unpack_from("<H", buf, vt + slot)[0]
            if off:
                out.append((pos + off, 4))

    model = reader.Model.GetRootAsModel(buf, 0) if hasattr(reader.Model, "GetRootAsModel") \
        else reader.Model.GetRootAs(buf, 0)
    table(model)
    for i in range(min(model.OperatorCodesLength(), 64)):
        table(model.OperatorCodes(i))
    for i in range(min(model.BuffersLength(), 64)):
        table(model.Buffers(i))
    for s in range(min(model.SubgraphsLength(), 8)):
        sg = model.Subgraphs(s)
        table(sg)
        for i in range(min(sg.TensorsLength(), 100)):
            table(sg.Tensors(i))
        for i in range(min(sg.OperatorsLength(), 100)):
            table(sg.Operators(i))
    return out


def table_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    positions = field_positions(data)
    pos, width = rng.choice(positions)
    buf = bytearray(data)
    if width == 2:
        value = rng.choice([0, 1, 2, 3, 4, 0x7FFF, 0xFFFF, rng.randrange(65536)])
        buf[pos:pos + 2] = value.to_bytes(2, "little")
    else:
        w = rng.choice([1, 4, 4, 8])
        value = rng.choice(U32 + [0x80000000, 0xFFFFFFFF]) & ((1 << (8 * w)) - 1)
        buf[pos:pos + w] = value.to_bytes(w, "little")[:len(buf) - pos]
    return bytes(buf), f"@{pos}"


def mutate(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    S = schema()
    if S is None or rng.random() < 0.25:
        try:
            new, detail = table_bytes(data, rng)
            mut.note("tflite.table-bytes", detail)
            return new
        except Exception:  # noqa: BLE001 - not walkable (already mangled): plain bytes
            new, name = mutate_bytes(data, rng)
            mut.note(name)
            return new
    for _attempt in range(4):
        model = S.ModelT.InitFromPackedBuf(data, 0)
        names_before = len(mut.names)
        apply_some(model, rng, mut, "tflite", MUTATORS, rng.choice([1, 1, 1, 2]))
        try:
            return _pack(S, model)
        except (struct.error, OverflowError, TypeError, ValueError, AttributeError):
            del mut.names[names_before:]  # a value the field cannot hold: try again
    new, name = mutate_bytes(data, rng)
    mut.note(name)
    return new
