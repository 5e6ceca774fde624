"""JSON-level mutations (`.webnn.json`, the weights manifest, the safetensors header) and
the binary weights files (WGWT blob, safetensors).

Generic JSON edits pick any value in the document and replace its value or type, delete or
duplicate it, rename keys, add keys, nest deeply, or write duplicate keys / non-standard
numbers; the manifest and safetensors mutators target the fields readers trust (offsets,
lengths, data types, shapes, header length, paths)."""

from __future__ import annotations

import json
import random
import struct
from typing import Any

from tools.fuzz.case import CANARY_TOKEN
from tools.fuzz.mutators.base import Mutation
from tools.fuzz.mutators.common import evil_string, evil_value, mutate_bytes
from tools.fuzz.mutators.source_types_mut import mutate_source_types


def _paths(doc: Any, limit: int = 5000) -> list[tuple[Any, Any]]:
    """(container, key) of every value below the root."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack and len(out) < limit:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else \
            enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            out.append((node, k))
            if isinstance(v, (dict, list)):
                stack.append(v)
    return out


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def mutate_doc(doc: Any, rng: random.Random, mut: Mutation, prefix: str) -> Any:
    """One generic edit; returns the new document (maybe a raw str for text-level edits)."""
    paths = _paths(doc)
    how = rng.choices(["value", "delete", "dup", "rename", "add", "nest", "root"],
                      [10, 2, 2, 2, 2, 1, 0.3])[0]
    if how == "root":
        mut.note(f"{prefix}.root")
        return evil_value(rng)
    if not paths:
        how = "add"
    if how == "value":
        node, key = rng.choice(paths)
        node[key] = evil_value(rng, node[key])
        mut.note(f"{prefix}.value", str(key)[:20])
    elif how == "delete":
        node, key = rng.choice(paths)
        del node[key]
        mut.note(f"{prefix}.delete", str(key)[:20])
    elif how == "dup":
        lists = [(n, k) for n, k in paths if isinstance(n, list)]
        if lists:
            node, key = rng.choice(lists)
            node.insert(key, node[key])
        mut.note(f"{prefix}.dup")
    elif how == "rename":
        dicts = [(n, k) for n, k in paths if isinstance(n, dict)]
        if dicts:
            node, key = rng.choice(dicts)
            node[rng.choice([evil_string(rng), key.upper(), "", key + " "])] = node.pop(key)
        mut.note(f"{prefix}.rename")
    elif how == "add":
        targets: list[dict[Any, Any]] = [n for n, _ in paths if isinstance(n, dict)] or \
            ([doc] if isinstance(doc, dict) else [])
        if targets:
            rng.choice(targets)[rng.choice(["__proto__", "extra", "evil\nkey",
                                            "constructor"])] = evil_value(rng)
        mut.note(f"{prefix}.add")
    else:
        node, key = rng.choice(paths)
        node[key] = "@@NEST@@"
        depth = rng.choice([64, 1000, 200000])
        mut.note(f"{prefix}.nest", str(depth))
        return json.dumps(doc).replace('"@@NEST@@"', _nest(depth), 1)
    return doc


def dumps(doc: Any, rng: random.Random) -> str:
    if isinstance(doc, str) and "[[[[" in doc:
        return doc
    return json.dumps(doc, ensure_ascii=rng.random() < 0.5,
                      indent=rng.choice([None, 2]))


def text_level(text: str, rng: random.Random, mut: Mutation, prefix: str) -> str:
    how = rng.choice(["dup-key", "nan", "trailing", "comment", "truncate", "bom"])
    mut.note(f"{prefix}.text-{how}")
    if how == "dup-key":
        i = text.find("{")
        return text[:i + 1] + '"format": 7, "version": "x", ' + text[i + 1:] if i >= 0 else text
    if how == "nan":
        return text.replace("1", "NaN", 1)
    if how == "trailing":
        return text.rstrip().rstrip("}") + ", }"
    if how == "comment":
        return "// comment\n" + text
    if how == "truncate":
        return text[:rng.randrange(max(len(text), 1))]
    return "\ufeff" + text


def mutate_json(data: bytes, rng: random.Random, mut: Mutation, prefix: str) -> bytes:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        new, name = mutate_bytes(data, rng)
        mut.note(name)
        return new
    if rng.random() < 0.15:
        return text_level(data.decode("utf-8", "replace"), rng, mut, prefix).encode()
    for _ in range(rng.choice([1, 1, 2])):
        doc = mutate_doc(doc, rng, mut, prefix)
        if isinstance(doc, str) and "[[[[" in doc:
            break
    return dumps(doc, rng).encode("utf-8", "surrogatepass")


def mutate_webnn_json(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    return mutate_json(data, rng, mut, "webnn-json")


# -- manifest -------------------------------------------------------------------------------


def mutate_manifest(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    try:
        doc = json.loads(data)
        tensors = doc["tensors"]
        assert isinstance(tensors, dict) and tensors
    except (ValueError, KeyError, TypeError, AssertionError):
        return mutate_json(data, rng, mut, "manifest")
    if rng.random() < (0.4 if "sourceDataTypes" in doc else 0.08):
        doc["sourceDataTypes"], how = mutate_source_types(doc.get("sourceDataTypes"), rng)
        mut.note(f"manifest.source-types-{how}")
        return dumps(doc, rng).encode("utf-8", "surrogatepass")
    if rng.random() < 0.3:
        return mutate_json(data, rng, mut, "manifest")
    key = rng.choice(sorted(tensors))
    entry = tensors[key]
    how = rng.choice(["offset", "length", "offset", "length", "dtype", "shape", "layout",
                      "remove", "overlap", "header", "names", "path"])
    if how in ("offset", "length"):
        field = "byteOffset" if how == "offset" else "byteLength"
        entry[field] = rng.choice([-1, 0, 7, 2**31, 2**53, 2**63, 2**64, 10**30, 8.0, 8.5,
                                   "8", True, None, entry.get(field, 0) + 1,
                                   entry.get(field, 0) * 1000 + 1])
    elif how == "dtype":
        entry["dataType"] = rng.choice(["float64", "int4", "uint4", "bogus", "", "f32", "F32",
                                        None, 5, "float16", "int64", "uint8", "bool"])
    elif how == "shape":
        entry["shape"] = rng.choice([[-1], [2**31, 2**31], [], [0], [1] * 100, "1,2", [1.5],
                                     [2**63], None, [[1]]])
    elif how == "layout":
        entry["layout"] = rng.choice(["column-major", "", None, 1])
    elif how == "remove":
        del tensors[key]
    elif how == "overlap":
        for other in tensors.values():
            other["byteOffset"] = entry.get("byteOffset", 8)
    elif how == "header":
        doc[rng.choice(["format", "version", "endianness"])] = evil_value(rng)
    elif how == "names":
        doc["names"] = rng.choice([{"inputs": {"x": evil_string(rng)}},
                                   {"outputs": {evil_string(rng): "y"}}, [], "x"])
    else:
        doc[rng.choice(["path", "file", "weights", "uri"])] = rng.choice(
            ["../canary.bin", CANARY_TOKEN, "file://" + CANARY_TOKEN])
    mut.note(f"manifest.{how}", str(key)[:20])
    return dumps(doc, rng).encode("utf-8", "surrogatepass")


# -- safetensors ----------------------------------------------------------------------------


def mutate_safetensors(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    if len(data) < 8:
        new, name = mutate_bytes(data, rng)
        mut.note(name)
        return new
    (n,) = struct.unpack_from("<Q", data, 0)
    header, body = data[8:8 + n], data[8 + n:]
    how = rng.choice(["length", "offsets", "offsets", "dtype", "shape", "remove",
                      "metadata", "json", "pad", "body", "source-types"])
    try:
        doc = json.loads(header)
        names = sorted(k for k in doc if k != "__metadata__")
    except (ValueError, RecursionError, TypeError):
        doc, names, how = None, [], "length"
    if how == "length" or doc is None or not names:
        new_n = rng.choice([0, 1, n - 1, n + 1, len(data), 2**31, 2**63, 2**64 - 1])
        mut.note("safetensors.length", str(new_n))
        return struct.pack("<Q", new_n) + data[8:]
    key = rng.choice(names)
    entry = doc[key]
    if how == "source-types":  # the metadata's webnn.sourceDataTypes (a JSON string)
        meta = doc.get("__metadata__")
        meta = meta if isinstance(meta, dict) else {}
        old = meta.get("webnn.sourceDataTypes")
        try:
            table = json.loads(old) if isinstance(old, str) else None
        except ValueError:
            table = None
        new, detail = mutate_source_types(table, rng)
        raw_table = rng.choices(["json", "bad-json", "not-string", "nest"], [8, 1, 1, 1])[0]
        meta["webnn.sourceDataTypes"] = {
            "json": json.dumps(new), "bad-json": json.dumps(new)[:-1] + "\x00",
            "not-string": new, "nest": "[" * 100000 + "]" * 100000}[raw_table]
        doc["__metadata__"] = meta
        mut.note(f"safetensors.source-types-{detail}", raw_table)
    elif how == "offsets" and isinstance(entry, dict):
        a, b = (entry.get("data_offsets") or [0, 0])[:2] if isinstance(
            entry.get("data_offsets"), list) and len(entry["data_offsets"]) >= 2 else (0, 0)
        entry["data_offsets"] = rng.choice([[b, a], [0, 2**63], [-1, 3], [a], [a, b, b],
                                            "0,4", [float(a), float(b)], [0, len(body) + 1],
                                            [a, a], [0, 2**64]])
    elif how == "dtype" and isinstance(entry, dict):
        entry["dtype"] = rng.choice(["F64", "BF16", "F8_E4M3", "F8_E5M2", "I4", "U4", "BOOL",
                                     "STR", "bogus", "", 5, None, "f32"])
    elif how == "shape" and isinstance(entry, dict):
        entry["shape"] = rng.choice([[-1], [2**40, 2**40], [], [0], "x", [1.5], [1] * 80])
    elif how == "remove":
        del doc[key]
    elif how == "metadata":
        doc["__metadata__"] = rng.choice([{"format": 5}, [], {"a": "\n\x1b"}, None,
                                          {"k" * 1000: "v" * 100000}])
    elif how == "json":
        doc = mutate_doc(doc, rng, mut, "safetensors.header")
    elif how == "pad":
        raw = json.dumps(doc).encode() + rng.choice([b" " * 7, b"\x00", b"\xff", b"\n"])
        mut.note("safetensors.pad")
        return struct.pack("<Q", len(raw)) + raw + body
    else:
        body = body[:rng.randrange(max(len(body), 1))]
    if how != "json":
        mut.note(f"safetensors.{how}", key[:20])
    raw = dumps(doc, rng).encode("utf-8", "surrogatepass")
    keep_length = rng.random() < 0.1
    return struct.pack("<Q", n if keep_length else len(raw)) + raw + body


# -- WGWT blob ----------------------------------------------------------------------------------


def mutate_weights(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    how = rng.choice(["magic", "version", "truncate", "truncate", "empty", "header-only",
                      "extend", "bytes"])
    mut.note(f"weights.{how}")
    if how == "magic":
        return rng.choice([b"WGWX", b"wgwt", b"\x00\x00\x00\x00", b"TFL3"]) + data[4:]
    if how == "version":
        return data[:4] + struct.pack("<I", rng.choice([0, 2, 2**31, 2**32 - 1])) + data[8:]
    if how == "truncate":
        return data[:rng.choice([7, 8, 9, len(data) // 2, max(len(data) - 1, 0)])]
    if how == "empty":
        return b""
    if how == "header-only":
        return data[:8]
    if how == "extend":
        return data + b"\x00" * rng.choice([1, 4096])
    new, name = mutate_bytes(data, rng)
    mut.names[-1] = f"weights.{name}"
    return new
