"""Structure-aware ONNX mutations: the model is parsed with `onnx`, changed, and serialized
again, so the mutant gets past protobuf parsing and reaches the reader and the handlers.

Here: attributes (ints to 0/-1/huge/2^63-1, floats to NaN/inf, strings with control
characters, newlines and U+2028, attribute types), value infos, opset versions and domains,
op types, value and node names, node inputs/outputs (removed, duplicated, blank), node order,
graph inputs/outputs, sparse initializers, metadata and functions; `MUTATORS` lists them with
the tensor mutations (`onnx_tensor_mut`), external data (`onnx_external`) and amplification
(`onnx_amplify`). Subgraphs (If/Loop bodies) and function bodies are mutated like the main
graph (`onnx_walk` finds them).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from tools.fuzz.mutators.base import Mutation, StructMutator, apply_some
from tools.fuzz.mutators.common import evil_float, evil_int, evil_string
from tools.fuzz.mutators.onnx_amplify import amplify
from tools.fuzz.mutators.onnx_external import external
from tools.fuzz.mutators.onnx_tensor_mut import (
    tensor_data,
    tensor_dims,
    tensor_dtype,
    tensor_values,
)
from tools.fuzz.mutators.onnx_walk import (
    DOMAINS,
    DTYPES,
    OP_TYPES,
    A,
    attributes_of,
    graphs,
    nodes,
    value_names,
)

# -- attributes -------------------------------------------------------------------------------


def attr_int(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    cands = attributes_of(model, (A.INT, A.INTS))
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
    cands = attributes_of(model, (A.FLOAT, A.FLOATS))
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
    cands = attributes_of(model, (A.STRING, A.STRINGS))
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
