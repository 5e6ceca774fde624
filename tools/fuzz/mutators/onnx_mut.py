"""Structure-aware ONNX mutations: the model is parsed with `onnx`, changed, and serialized
again, so the mutant gets past protobuf parsing and reaches the reader and the handlers.

Attributes (ints to 0/-1/huge/2^63-1, floats to NaN/inf, strings with control characters,
newlines and U+2028, attribute types), tensors (dims, data types, raw_data truncation,
values of shape-like tensors), value infos, opset versions and domains, op types, value and
node names, node inputs/outputs (removed, duplicated, blank), external data (locations with
`../`, absolute paths, symlinks and FIFOs, bad offsets and lengths), node order, graph
inputs/outputs, sparse initializers and metadata. Subgraphs (If/Loop bodies) and function
bodies are mutated like the main graph. `amplify` adds what a small file can ask for: deep
or branching If nesting, functions doubling per level or calling themselves, big derived
constants (ConstantOfShape / Expand / Tile / Range, sparse dense shapes).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

from tools.fuzz.case import CANARY_BYTES
from tools.fuzz.mutators.base import Mutation, StructMutator, apply_some
from tools.fuzz.mutators.common import canary_paths, evil_float, evil_int, evil_string

A = AttributeProto
OP_TYPES = ["Conv", "Relu", "Add", "Gemm", "MatMul", "Reshape", "Loop", "If", "Scan",
            "ConstantOfShape", "Expand", "Tile", "Range", "Pad", "Resize", "OneHot", "Gather",
            "Slice", "Concat", "Split", "Transpose", "Softmax", "LSTM", "GRU", "Einsum",
            "NonZero", "Unique", "TopK", "CumSum", "Constant", "Identity", "Cast", "Where",
            "QuantizeLinear", "DequantizeLinear", "Attention", "SequenceConstruct",
            "Frobnicate", "conv", ""]
DOMAINS = ["", "ai.onnx", "com.microsoft", "ai.onnx.ml", "local", "bogus.domain",
           "com.microsoft.nchwc", "\n"]
DTYPES = [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19, 21, 22, 23, 24, 25,
          99, -1]
NUM_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data",
              "string_data")


# -- walking ----------------------------------------------------------------------------------


def graphs(model: onnx.ModelProto) -> list[onnx.GraphProto]:
    """The main graph and every subgraph (attributes of type GRAPH / GRAPHS), depth first."""
    out: list[onnx.GraphProto] = []

    def walk(g: onnx.GraphProto) -> None:
        out.append(g)
        for n in g.node:
            for a in n.attribute:
                if a.type == A.GRAPH:
                    walk(a.g)
                elif a.type == A.GRAPHS:
                    for sub in a.graphs:
                        walk(sub)

    walk(model.graph)
    return out


def nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for g in graphs(model) for n in g.node] + \
        [n for f in model.functions for n in f.node]


def tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    out: list[onnx.TensorProto] = []
    for g in graphs(model):
        out += list(g.initializer)
        for s in g.sparse_initializer:
            out += [s.values, s.indices]
    for n in nodes(model):
        for a in n.attribute:
            if a.type == A.TENSOR:
                out.append(a.t)
            elif a.type == A.TENSORS:
                out += list(a.tensors)
    return out


def value_names(g: onnx.GraphProto) -> list[str]:
    names = [v.name for v in g.input] + [v.name for v in g.output] + \
        [t.name for t in g.initializer]
    for n in g.node:
        names += [x for x in n.output if x]
    return names


def _attrs(model: onnx.ModelProto, types: tuple[int, ...]
           ) -> list[tuple[onnx.NodeProto, onnx.AttributeProto]]:
    return [(n, a) for n in nodes(model) for a in n.attribute if a.type in types]


# -- attributes -------------------------------------------------------------------------------


def attr_int(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    cands = _attrs(model, (A.INT, A.INTS))
    if not cands:
        return None
    n, a = rng.choice(cands)
    if a.type == A.INT:
        a.i = evil_int(rng, a.i)
    else:
        how = rng.choice(["element", "element", "empty", "append", "long", "negate"])
        if how == "element" and a.ints:
            a.ints[rng.randrange(len(a.ints))] = evil_int(rng)
        elif how == "empty":
            del a.ints[:]
        elif how == "append":
            a.ints.append(evil_int(rng))
        elif how == "long":
            a.ints.extend([rng.choice([1, 2, 2**20])] * rng.choice([8, 64, 100000]))
        else:
            a.ints[:] = [-abs(v) - 1 for v in a.ints] or [-1]
    return f"{n.op_type}.{a.name}"


def attr_float(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    cands = _attrs(model, (A.FLOAT, A.FLOATS))
    if not cands:
        return None
    n, a = rng.choice(cands)
    if a.type == A.FLOAT:
        a.f = evil_float(rng)
    elif a.floats:
        a.floats[rng.randrange(len(a.floats))] = evil_float(rng)
    else:
        a.floats.append(evil_float(rng))
    return f"{n.op_type}.{a.name}"


def attr_string(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    cands = _attrs(model, (A.STRING, A.STRINGS))
    if not cands:
        return None
    n, a = rng.choice(cands)
    value = evil_string(rng).encode() if rng.random() < 0.8 else b"\xff\xfe\x00bad"
    if a.type == A.STRING:
        a.s = value
    elif a.strings:
        a.strings[rng.randrange(len(a.strings))] = value
    else:
        a.strings.append(value)
    return f"{n.op_type}.{a.name}"


def attr_kind(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Change an attribute's declared type, delete it, duplicate it, or add a strange one."""
    all_nodes = nodes(model)
    if not all_nodes:
        return None
    n = rng.choice(all_nodes)
    how = rng.choice(["retype", "delete", "duplicate", "add"])
    if how in ("retype", "delete", "duplicate") and not n.attribute:
        how = "add"
    if how == "retype":
        a = rng.choice(list(n.attribute))
        a.type = rng.choice([0, A.FLOAT, A.INT, A.STRING, A.TENSOR, A.GRAPH, A.FLOATS,
                             A.INTS, A.STRINGS, A.SPARSE_TENSOR, A.TYPE_PROTO, 99])
        return f"{n.op_type}.{a.name}:retype"
    if how == "delete":
        a = rng.choice(list(n.attribute))
        n.attribute.remove(a)
        return f"{n.op_type}.{a.name}:delete"
    if how == "duplicate":
        a = rng.choice(list(n.attribute))
        n.attribute.append(a)
        return f"{n.op_type}.{a.name}:duplicate"
    name = rng.choice(["axis", "perm", "mode", "to", "kernel_shape", "body", "value",
                       "ref", evil_string(rng)])
    attr = n.attribute.add()
    attr.name = name
    kind = rng.choice(["int", "string", "floats", "ref", "graph"])
    if kind == "int":
        attr.type, attr.i = A.INT, evil_int(rng)
    elif kind == "string":
        attr.type, attr.s = A.STRING, evil_string(rng).encode()
    elif kind == "floats":
        attr.type = A.FLOATS
        attr.floats.extend([evil_float(rng)] * 3)
    elif kind == "ref":
        attr.type, attr.ref_attr_name = A.INT, "nope"
    else:
        attr.type = A.GRAPH
        attr.g.name = "empty"
    return f"{n.op_type}.{name}:add-{kind}"


# -- tensors ------------------------------------------------------------------------------------


def _raw(t: onnx.TensorProto) -> bool:
    return bool(t.HasField("raw_data"))


def tensor_dims(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    ts = tensors(model)
    if not ts:
        return None
    t = rng.choice(ts)
    how = rng.choice(["dim", "dim", "drop", "add", "huge", "scalar"])
    if how == "dim" and t.dims:
        t.dims[rng.randrange(len(t.dims))] = evil_int(rng)
    elif how == "drop" and t.dims:
        del t.dims[-1]
    elif how == "huge":
        t.dims[:] = [2**31, 2**31] if rng.random() < 0.5 else [2**62, 4]
    elif how == "scalar":
        del t.dims[:]
    else:
        t.dims.append(rng.choice([0, 1, 2, 7]))
    return f"{t.name}:{how}"


def tensor_dtype(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    ts = tensors(model)
    if not ts:
        return None
    t = rng.choice(ts)
    t.data_type = rng.choice(DTYPES)
    return f"{t.name}:{t.data_type}"


def tensor_data(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Truncate / extend / drop / duplicate the stored data."""
    ts = tensors(model)
    if not ts:
        return None
    t = rng.choice(ts)
    how = rng.choice(["truncate", "truncate", "extend", "clear", "both", "typed-len"])
    if _raw(t):
        raw = t.raw_data
        if how == "truncate":
            t.raw_data = raw[:rng.choice([0, 1, len(raw) // 2, max(0, len(raw) - 1)])]
        elif how == "extend":
            t.raw_data = raw + b"\x00" * rng.choice([1, 4, 4096])
        elif how == "clear":
            t.ClearField("raw_data")
        elif how == "both":
            t.float_data.extend([1.0, 2.0])
        else:
            t.raw_data = raw[:len(raw) - len(raw) % 4 + 1] if raw else b"\x01"
        return f"{t.name}:raw-{how}"
    fields = [f for f in NUM_FIELDS if len(getattr(t, f))]
    if not fields:
        t.raw_data = b"\x01\x02\x03"
        return f"{t.name}:raw-added"
    field = getattr(t, rng.choice(fields))
    if how in ("truncate", "clear"):
        del field[len(field) // 2 if how == "truncate" else 0:]
    elif how == "both":
        t.raw_data = b"\x00" * 8
    else:
        field.extend([field[0]] * rng.choice([1, 3, 1000]))
    return f"{t.name}:typed-{how}"


def tensor_values(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Set an element of a (preferably shape-like integer) tensor to an extreme value:
    trip counts, shapes, repeats, pads, depths, axes, scales."""
    ts = [t for t in tensors(model) if t.data_location != TensorProto.EXTERNAL]
    ints = [t for t in ts if t.data_type in (TensorProto.INT64, TensorProto.INT32)]
    floats = [t for t in ts if t.data_type in (TensorProto.FLOAT, TensorProto.DOUBLE)]
    pool = ints if ints and (rng.random() < 0.7 or not floats) else floats
    if not pool:
        return None
    t = rng.choice(pool)
    try:
        arr = numpy_helper.to_array(t).copy()
    except Exception:  # noqa: BLE001 - an earlier mutation broke it: leave it
        return None
    if arr.size == 0:
        return None
    flat = arr.reshape(-1)
    i = rng.randrange(flat.size)
    if arr.dtype.kind in "iu":
        bits = arr.dtype.itemsize * 8
        flat[i] = evil_int(rng, int(flat[i]), bits=bits)
        if rng.random() < 0.2:
            flat[:] = flat[i]
    else:
        with np.errstate(over="ignore"):
            flat[i] = evil_float(rng)
    new = numpy_helper.from_array(arr, t.name)
    t.CopyFrom(new)
    return f"{t.name}[{i}]={flat[i]}"


# -- graph structure --------------------------------------------------------------------------


def value_info(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    g = rng.choice(graphs(model))
    vis = list(g.input) + list(g.output) + list(g.value_info)
    if not vis:
        return None
    v = rng.choice(vis)
    tt = v.type.tensor_type
    how = rng.choice(["dim", "dim", "param", "elem", "noshape", "rank", "notype"])
    if how in ("dim", "param") and not tt.shape.dim:
        how = "rank"
    if how == "dim":
        tt.shape.dim[rng.randrange(len(tt.shape.dim))].dim_value = evil_int(rng)
    elif how == "param":
        tt.shape.dim[rng.randrange(len(tt.shape.dim))].dim_param = evil_string(rng)
    elif how == "elem":
        tt.elem_type = rng.choice(DTYPES)
    elif how == "noshape":
        tt.ClearField("shape")
    elif how == "rank":
        for _ in range(rng.choice([1, 3, 40])):
            tt.shape.dim.add().dim_value = rng.choice([1, 2])
    else:
        v.ClearField("type")
    return f"{v.name}:{how}"


def opset(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    how = rng.choice(["version", "version", "duplicate", "remove", "domain", "ir"])
    default = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if how == "version" and default:
        default[0].version = rng.choice([0, 1, 5, 6, 7, 9, 12, 99, 2**63 - 1, -1])
        return f"version={default[0].version}"
    if how == "duplicate" and default:
        extra = model.opset_import.add()
        extra.domain, extra.version = default[0].domain, default[0].version + 1
        return "duplicate"
    if how == "remove":
        del model.opset_import[:]
        return "remove-all"
    if how == "domain":
        extra = model.opset_import.add()
        extra.domain, extra.version = rng.choice(DOMAINS[1:]), evil_int(rng)
        return f"add:{extra.domain!r}"
    model.ir_version = rng.choice([0, 1, 3, 99, -1, 2**62])
    return f"ir={model.ir_version}"


def op_type(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    all_nodes = nodes(model)
    if not all_nodes:
        return None
    n = rng.choice(all_nodes)
    if rng.random() < 0.5:
        n.domain = rng.choice(DOMAINS)
        return f"{n.op_type}:domain={n.domain!r}"
    old = n.op_type
    n.op_type = rng.choice(OP_TYPES) if rng.random() < 0.8 else evil_string(rng)
    return f"{old}->{n.op_type[:20]!r}"


def _rename(g: onnx.GraphProto, old: str, new: str) -> None:
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.name == old:
            v.name = new
    for t in g.initializer:
        if t.name == old:
            t.name = new
    for n in g.node:
        for seq in (n.input, n.output):
            for i, x in enumerate(seq):
                if x == old:
                    seq[i] = new


def names(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    g = rng.choice(graphs(model))
    how = rng.choice(["value", "value", "value-one", "node", "graph", "duplicate"])
    if how.startswith("value"):
        vals = value_names(g)
        if not vals:
            return None
        old = rng.choice(vals)
        new = evil_string(rng) if rng.random() < 0.85 else rng.choice(vals)
        if how == "value":
            _rename(g, old, new)
        else:
            for n in g.node:
                if old in n.input:
                    n.input[list(n.input).index(old)] = new
                    break
        return f"{how}:{old}->{new[:20]!r}"
    if how == "node" and g.node:
        n = rng.choice(list(g.node))
        n.name = evil_string(rng)
        return f"node:{n.op_type}"
    if how == "graph":
        g.name = evil_string(rng)
        return "graph"
    outs = [n for n in g.node if n.output]
    if len(outs) < 2:
        return None
    a, b = rng.sample(outs, 2)
    b.output[0] = a.output[0]
    return f"duplicate-output:{a.output[0]}"


def node_io(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    all_nodes = nodes(model)
    if not all_nodes:
        return None
    n = rng.choice(all_nodes)
    how = rng.choice(["drop-in", "blank-in", "extra-in", "dup-in", "swap-in", "drop-out",
                      "extra-out", "undefined-in"])
    if how == "drop-in" and n.input:
        del n.input[-1]
    elif how == "blank-in" and n.input:
        n.input[rng.randrange(len(n.input))] = ""
    elif how == "extra-in":
        n.input.append(n.input[0] if n.input else "x")
    elif how == "dup-in" and n.input:
        n.input.insert(0, n.input[0])
    elif how == "swap-in" and len(n.input) > 1:
        n.input[0], n.input[1] = n.input[1], n.input[0]
    elif how == "drop-out" and n.output:
        del n.output[-1]
    elif how == "extra-out":
        n.output.append(f"{n.output[0] if n.output else 'y'}_extra")
    elif how == "undefined-in" and n.input:
        n.input[rng.randrange(len(n.input))] = "never_defined"
    else:
        return None
    return f"{n.op_type}:{how}"


def node_order(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    g = rng.choice(graphs(model))
    items = list(g.node)
    if not items:
        return None
    how = rng.choice(["shuffle", "reverse", "duplicate", "remove", "repeat"])
    if how == "shuffle":
        rng.shuffle(items)
    elif how == "reverse":
        items.reverse()
    elif how == "duplicate":
        i = rng.randrange(len(items))
        items.insert(i, items[i])
    elif how == "remove":
        items.pop(rng.randrange(len(items)))
    else:  # many copies of a node writing the same output
        items = items + [items[-1]] * rng.choice([10, 5000])
    del g.node[:]
    g.node.extend(items)
    return how


def graph_io(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    g = rng.choice(graphs(model))
    how = rng.choice(["drop-outputs", "dup-output", "output-is-input", "drop-input",
                      "input-shadows-init", "extra-input", "output-is-init"])
    if how == "drop-outputs":
        del g.output[:]
    elif how == "dup-output" and g.output:
        g.output.append(g.output[0])
    elif how == "output-is-input" and g.output and g.input:
        g.output[0].name = g.input[0].name
    elif how == "drop-input" and g.input:
        del g.input[0]
    elif how == "input-shadows-init" and g.initializer:
        vi = onnx.helper.make_tensor_value_info(g.initializer[0].name, TensorProto.FLOAT,
                                                ["free"])
        g.input.append(vi)
    elif how == "extra-input":
        dims: list[Any] = [rng.choice(["d", 1])]
        g.input.append(onnx.helper.make_tensor_value_info(
            evil_string(rng) or "extra", rng.choice(DTYPES[1:12]), dims))
    elif how == "output-is-init" and g.initializer and g.output:
        g.output[0].name = g.initializer[0].name
    else:
        return None
    return how


def sparse(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    sps = [s for g in graphs(model) for s in g.sparse_initializer]
    if not sps:
        return None
    s = rng.choice(sps)
    how = rng.choice(["index", "dims", "values", "indices-2d", "dup-index"])
    if how == "index":
        idx = numpy_helper.to_array(s.indices).copy()
        if idx.size:
            idx.reshape(-1)[0] = rng.choice([-1, 10**6, 2**62, -2**63])
            s.indices.CopyFrom(numpy_helper.from_array(idx, s.indices.name))
    elif how == "dims":
        s.dims[:] = [rng.choice([0, 1, 2**31, -4])] + list(s.dims[1:])
    elif how == "values":
        s.values.CopyFrom(numpy_helper.from_array(np.ones(7, np.float32), s.values.name))
    elif how == "indices-2d":
        s.indices.CopyFrom(numpy_helper.from_array(np.zeros((3, 5), np.int64),
                                                   s.indices.name))
    else:
        idx = numpy_helper.to_array(s.indices).copy()
        idx.reshape(-1)[:] = 0
        s.indices.CopyFrom(numpy_helper.from_array(idx, s.indices.name))
    return how


def metadata(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    how = rng.choice(["doc", "producer", "props", "domain"])
    if how == "doc":
        model.graph.doc_string = evil_string(rng)
    elif how == "producer":
        model.producer_name = evil_string(rng)
        model.producer_version = evil_string(rng)
    elif how == "props":
        p = model.metadata_props.add()
        p.key, p.value = evil_string(rng), evil_string(rng)
    else:
        model.domain = evil_string(rng)
    return how


def functions(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    if not model.functions:
        return None
    f = rng.choice(list(model.functions))
    how = rng.choice(["recursive", "drop-output", "opset", "rename", "attr-ref"])
    if how == "recursive":  # the function calls itself
        call = f.node.add()
        call.op_type, call.domain = f.name, f.domain
        call.input.append(f.input[0] if f.input else "a")
        call.output.append("again")
    elif how == "drop-output":
        del f.output[:]
    elif how == "opset":
        del f.opset_import[:]
    elif how == "rename":
        f.name = evil_string(rng)
    else:
        if f.node:
            a = f.node[0].attribute.add()
            a.name, a.type, a.ref_attr_name = "alpha", A.FLOAT, "missing"
    return how


# -- amplification ----------------------------------------------------------------------------

BIG_SHAPES = [[16384, 16384], [8192, 8192], [12000, 12000], [65536, 65536], [1 << 20, 4096],
              [100_000, 21_000]]
"""Shapes of derived constants: 256 MiB to 1 TiB of float32 from a few bytes of file."""


def _float_source(model: onnx.ModelProto) -> str:
    """A float value of the main graph to feed an added node (a new initializer if none)."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    for vi in g.input:
        if vi.name not in inits and vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            return str(vi.name)
    g.initializer.append(numpy_helper.from_array(np.ones([1], np.float32), "amp_x"))
    return "amp_x"


def _local_opset(model: onnx.ModelProto) -> None:
    if not any(o.domain == "amp" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("amp", 1))


def _function(model: onnx.ModelProto, name: str, body: list[onnx.NodeProto]) -> None:
    model.functions.append(onnx.helper.make_function(
        "amp", name, ["a"], ["b"], body,
        [onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("amp", 1)]))


def amplify(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Add a node that asks for far more work or memory than its bytes: a deep chain or a
    small balanced tree of If nodes, functions calling the previous one twice per level
    (2^levels nodes), functions calling themselves, a ConstantOfShape / Expand / Tile /
    Range of a big shape, a sparse initializer with a big dense shape."""
    from onnx import helper

    g = model.graph
    x = _float_source(model)
    how = rng.choice(["if-chain", "if-tree", "doubling", "recursive", "derived", "derived",
                      "sparse"])
    if how in ("if-chain", "if-tree"):
        depth = rng.choice([6, 12, 17, 20, 24] if how == "if-chain" else [6, 9, 11])
        g.initializer.append(numpy_helper.from_array(np.array(rng.random() < 0.5), "amp_c"))

        def branch(level: int, out: str) -> onnx.GraphProto:
            if level == 0:
                node = helper.make_node("Relu", [x], [out])
            else:
                other = branch(level - 1, out) if how == "if-tree" else branch(0, out)
                node = helper.make_node("If", ["amp_c"], [out],
                                        then_branch=branch(level - 1, out), else_branch=other)
            return helper.make_graph([node], f"amp{level}", [],
                                     [helper.make_tensor_value_info(out, TensorProto.FLOAT,
                                                                    None)])

        g.node.append(helper.make_node("If", ["amp_c"], ["amp_y"], name="amp_if",
                                       then_branch=branch(depth - 1, "amp_t"),
                                       else_branch=branch(depth - 1, "amp_e")))
        return f"{how}:{depth}"
    if how in ("doubling", "recursive"):
        _local_opset(model)
        if how == "doubling":
            levels = rng.choice([8, 16, 24, 40])
            _function(model, "F0", [helper.make_node("Relu", ["a"], ["b"])])
            for k in range(1, levels + 1):
                _function(model, f"F{k}", [
                    helper.make_node(f"F{k - 1}", ["a"], ["m"], domain="amp"),
                    helper.make_node(f"F{k - 1}", ["m"], ["b"], domain="amp")])
            top = f"F{levels}"
        else:
            levels = rng.choice([1, 2, 3])
            for k in range(levels):
                callee = f"R{(k + 1) % levels}"
                _function(model, f"R{k}", [
                    helper.make_node(callee, ["a"], ["m"], domain="amp"),
                    helper.make_node(callee, ["m"], ["b"], domain="amp")])
            top = "R0"
        g.node.append(helper.make_node(top, [x], ["amp_y"], domain="amp", name="amp_call"))
        return f"{how}:{levels}"
    shape = rng.choice(BIG_SHAPES)
    if how == "sparse":
        values = numpy_helper.from_array(np.ones([1], np.float32), "amp_w")
        indices = numpy_helper.from_array(np.zeros([1], np.int64), "amp_w_idx")
        g.sparse_initializer.append(helper.make_sparse_tensor(values, indices, shape))
        g.node.append(helper.make_node("Identity", ["amp_w"], ["amp_y"], name="amp_id"))
        return f"sparse:{shape}"
    op = rng.choice(["ConstantOfShape", "Expand", "Tile", "Range"])
    g.initializer.append(numpy_helper.from_array(np.array(shape, np.int64), "amp_s"))
    if op == "ConstantOfShape":
        node = helper.make_node(op, ["amp_s"], ["amp_y"], name="amp_n",
                                value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    elif op == "Expand":
        g.initializer.append(numpy_helper.from_array(np.ones([1], np.float32), "amp_one"))
        node = helper.make_node(op, ["amp_one", "amp_s"], ["amp_y"], name="amp_n")
    elif op == "Tile":
        g.initializer.append(numpy_helper.from_array(np.ones([1, 1], np.float32), "amp_one"))
        node = helper.make_node(op, ["amp_one", "amp_s"], ["amp_y"], name="amp_n")
    else:
        g.initializer.extend([numpy_helper.from_array(np.array(v, np.float32), f"amp_{k}")
                              for k, v in (("a", 0.0), ("b", float(shape[0] * shape[1])),
                                           ("d", 1.0))])
        node = helper.make_node(op, ["amp_a", "amp_b", "amp_d"], ["amp_y"], name="amp_n")
    g.node.append(node)
    if rng.random() < 0.5:  # make it an output, so that nothing can skip it
        g.output.append(helper.make_tensor_value_info("amp_y", TensorProto.FLOAT, None))
    return f"{op}:{shape}"


# -- external data ------------------------------------------------------------------------------


def _externalize(t: onnx.TensorProto, entries: list[tuple[str, str]]) -> None:
    t.ClearField("raw_data")
    for f in NUM_FIELDS:
        t.ClearField(f)
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    for key, value in entries:
        e = t.external_data.add()
        e.key, e.value = key, value


def external(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Move an initializer's data to an external file: the canary outside the folder (by
    `../`, an absolute path, a symlink, a symlinked folder), a FIFO, a missing file, or a
    real file with bad offsets / lengths / locations."""
    inits = [t for g in graphs(model) for t in g.initializer
             if t.data_type in (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32)]
    if not inits:
        return None
    t = rng.choice(inits)
    try:
        data = numpy_helper.to_array(t).tobytes() if t.data_location != TensorProto.EXTERNAL \
            else b"\x00" * 16
    except Exception:  # noqa: BLE001 - an earlier mutation broke it
        data = b"\x00" * 16
    how = rng.choice(["canary", "canary", "canary", "params", "location", "legit", "fifo",
                      "missing"])
    length = str(len(data))
    if how == "canary":
        loc = rng.choice(canary_paths())
        if loc == "link.bin":
            mut.links["link.bin"] = rng.choice(["{canary}", "../canary.bin"])
        elif loc.startswith("dirlink/"):
            mut.links["dirlink"] = ".."
        offset = rng.choice([0, 0, 4, 64]) if len(data) + 64 <= CANARY_BYTES else 0
        _externalize(t, [("location", loc), ("offset", str(offset)), ("length", length)])
        return f"{t.name}:canary:{loc[:24]}"
    name = f"{t.name or 'x'}.bin".replace("/", "_")[:60] or "x.bin"
    if how == "fifo":
        mut.fifos.append(name)
        _externalize(t, [("location", name), ("length", length)])
        return f"{t.name}:fifo"
    if how == "missing":
        _externalize(t, [("location", "missing.bin")])
        return f"{t.name}:missing"
    mut.files[name] = data
    if how == "legit":
        _externalize(t, [("location", name), ("offset", "0"), ("length", length)]
                     + ([("checksum", "abc")] if rng.random() < 0.3 else []))
        return f"{t.name}:legit"
    if how == "params":
        bad = rng.choice(["-1", "abc", "", "1e3", "0x10", str(2**63), str(2**64), " 8",
                          "8\n", "-0", str(len(data) + 1), "99999999999"])
        key = rng.choice(["offset", "length"])
        entries = [("location", name), ("offset", "0"), ("length", length)]
        entries = [(k, bad if k == key else v) for k, v in entries]
        if rng.random() < 0.3:
            entries.append((key, "4"))  # a duplicate key
        _externalize(t, entries)
        return f"{t.name}:{key}={bad!r}"
    loc = rng.choice(["", ".", "/", f"{name}\x00.evil", name.upper(), f"{name}/",
                      "x" * 300, "\n", "m", f"./{name}", f"sub/../{name}", "~/x.bin",
                      "C:\\\\x.bin", "file:///etc/hostname"])
    _externalize(t, [("location", loc), ("offset", "0"), ("length", length)])
    return f"{t.name}:location={loc[:20]!r}"


MUTATORS: list[tuple[str, StructMutator]] = [
    ("attr-int", attr_int), ("attr-int", attr_int), ("attr-float", attr_float),
    ("attr-string", attr_string), ("attr-kind", attr_kind), ("tensor-dims", tensor_dims),
    ("tensor-dtype", tensor_dtype), ("tensor-data", tensor_data),
    ("tensor-values", tensor_values), ("tensor-values", tensor_values),
    ("value-info", value_info), ("opset", opset), ("op-type", op_type), ("names", names),
    ("names", names), ("node-io", node_io), ("node-order", node_order), ("graph-io", graph_io),
    ("sparse", sparse), ("metadata", metadata), ("functions", functions),
    ("external", external), ("external", external), ("amplify", amplify),
]


def mutate(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    model = onnx.ModelProto()
    model.ParseFromString(data)
    apply_some(model, rng, mut, "onnx", MUTATORS, rng.choice([1, 1, 1, 2, 3]))
    return bytes(model.SerializeToString())


def parse(data: bytes) -> Any:
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model
