"""Limits files (`--target FILE`, an `opSupportLimits()` JSON object).

Limits: wrong JSON types at every level (root, operator, role entry, dataTypes, rankRange,
its bounds), negative / huge / fractional / NaN / inverted rank ranges, unknown operators,
roles and data types, operators or roles removed, every type of an operator or of the graph's
inputs / constants / outputs taken away, odd `preferredInputLayout` /
`maxTensorByteLength`, generic JSON edits (deep nesting, duplicate keys, NaN, BOM, ...),
non-UTF-8 bytes, a file over the reader's size cap, and the file replaced by a FIFO, a
symlink to a non-JSON file in the folder, a dangling or looping symlink. (`--target FILE` is
named by the caller, like the model path, so it is not confined to the model folder: no
symlink to the canary here.)
"""

from __future__ import annotations

import json
import random
from typing import Any

from tools.fuzz.mutators.base import Mutation
from tools.fuzz.mutators.common import evil_string, evil_value
from tools.fuzz.mutators.json_mut import dumps, mutate_json

ROLE_KEYS = ("input", "constant", "output")
EVIL_TYPES = ["float128", "int4", "uint4", "bfloat16", "bool", "float64", "", "FLOAT32",
              "float32 ", "int8\n", "string", "complex64"]
EVIL_BOUNDS: list[Any] = [-1, -2**63, 2**31, 2**62, 2**63, 2**64 + 1, 10**400, 1.5, -0.0,
                          float("nan"), float("inf"), True, None, "4", [4], {"v": 4}, 0, 1]


def _ops(doc: dict[str, Any]) -> list[str]:
    return [k for k, v in doc.items() if isinstance(v, dict) and k not in ROLE_KEYS]


def _entries(doc: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """(container, key) of every limits entry: the graph's input / constant / output and
    each operator's roles."""
    out: list[tuple[dict[str, Any], str]] = [(doc, k) for k in ROLE_KEYS
                                             if isinstance(doc.get(k), dict)]
    for op in _ops(doc):
        out += [(doc[op], role) for role, e in doc[op].items() if isinstance(e, dict)]
    return out


def _structural(doc: dict[str, Any], rng: random.Random) -> str:
    """One structural edit of a parsed limits object; returns its name(detail)."""
    ops, entries = _ops(doc), _entries(doc)
    how = rng.choices(["op-type", "role-type", "dtypes", "rank", "rank", "unknown-op",
                       "unknown-role", "remove-op", "remove-role", "restrict", "restrict-io",
                       "layout", "max-bytes", "many-ops"],
                      [2, 2, 3, 3, 2, 1, 1, 2, 2, 3, 3, 1, 2, 0.3])[0]
    if how in ("op-type", "remove-op", "unknown-role", "restrict") and not ops:
        how = "unknown-op"
    if how in ("role-type", "dtypes", "rank", "remove-role") and not entries:
        how = "unknown-op"
    if how == "op-type":
        op = rng.choice(ops)
        doc[op] = rng.choice([[], "conv2d", None, 1, True, [{"dataTypes": ["float32"]}],
                              evil_value(rng)])
        return f"{how}({op[:20]})"
    if how == "role-type":
        node, role = rng.choice(entries)
        node[role] = rng.choice([[], "float32", None, 0, ["float32"], {"dataTypes": None},
                                 evil_value(rng)])
        return f"{how}({role[:20]})"
    if how == "dtypes":
        node, role = rng.choice(entries)
        entry = node[role]
        entry["dataTypes"] = rng.choice([
            "float32", None, 5, {}, [5], [None], [["float32"]], [],
            [rng.choice(EVIL_TYPES)], (entry.get("dataTypes") or []) + [rng.choice(EVIL_TYPES)],
            ["float32"] * 1000, [evil_string(rng)]])
        return f"{how}({role[:20]})"
    if how == "rank":
        node, role = rng.choice(entries)
        entry = node[role]
        ranks = entry.get("rankRange")
        if not isinstance(ranks, dict) or rng.random() < 0.2:
            entry["rankRange"] = rng.choice([[0, 4], "0-4", None, 4, {}, {"min": 0},
                                             {"max": 4}, {"min": 5, "max": 1},
                                             {"min": 0, "max": 0}, {"min": 2**62, "max": 2**63}])
        else:
            key = rng.choice(["min", "max", "both", "swap"])
            if key == "both":
                ranks["min"], ranks["max"] = rng.choice(EVIL_BOUNDS), rng.choice(EVIL_BOUNDS)
            elif key == "swap":
                ranks["min"], ranks["max"] = ranks.get("max", 8) + 1, ranks.get("min", 0)
            else:
                ranks[key] = rng.choice(EVIL_BOUNDS)
        return f"{how}({role[:20]})"
    if how == "unknown-op":
        name = rng.choice(["fooBar", evil_string(rng), "", "Conv2d", "conv2d\n", "constructor"])
        doc[name] = rng.choice([{"zz": {"dataTypes": ["float32"]}}, {}, {"input": {}},
                                {"input": {"dataTypes": ["int4"], "rankRange": {"min": 0,
                                                                             "max": 99}}}])
        return f"{how}({name[:20]})"
    if how == "unknown-role":
        op = rng.choice(ops)
        role = rng.choice(["bogus", evil_string(rng), "", "Input", "outputs"])
        doc[op][role] = rng.choice([{"dataTypes": ["float32"]}, {}, {"rankRange": {}}])
        return f"{how}({op[:20]})"
    if how == "remove-op":
        for op in rng.sample(ops, rng.choice([1, max(1, len(ops) // 2), len(ops)])):
            del doc[op]
        return how
    if how == "remove-role":
        node, role = rng.choice(entries)
        del node[role]
        return f"{how}({role[:20]})"
    if how == "restrict":  # an operator (some of its roles) supports no / one narrow type
        op = rng.choice(ops)
        roles = [r for r, e in doc[op].items() if isinstance(e, dict)]
        types = rng.choice([[], ["int8"], ["float16"], ["int32"], ["uint8"], ["int64"]])
        for role in roles if rng.random() < 0.5 else roles[:1]:
            doc[op][role]["dataTypes"] = list(types)
            if rng.random() < 0.3:
                doc[op][role]["rankRange"] = {"min": 0, "max": rng.choice([0, 1, 2])}
        return f"{how}({op[:20]}:{','.join(types)})"
    if how == "restrict-io":
        key = rng.choice(ROLE_KEYS)
        types = rng.choice([[], ["float16"], ["int32"], ["float32"], ["int8"], ["int64"],
                            ["uint8", "int8"]])
        doc[key] = {"dataTypes": types, "rankRange": rng.choice(
            [{"min": 0, "max": 8}, {"min": 0, "max": 0}, {"min": 1, "max": 2}])}
        return f"{how}({key}:{','.join(types)})"
    if how == "layout":
        doc["preferredInputLayout"] = rng.choice(["nhwc", "nchw", "", "NHWC", "hwio", None, 5,
                                                  ["nhwc"], evil_string(rng)])
        return how
    if how == "max-bytes":
        doc["maxTensorByteLength"] = rng.choice([0, 1, 4, 2**31 - 1, 2**53 + 1, 2**63, 10**400,
                                                 -1, 1.5, float("nan"), "1", None, True])
        return how
    for i in range(20000):  # many-ops: a large (under the size cap) file
        doc[f"op{i}"] = {"input": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 4}}}
    return how


def mutate_limits(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    """A structural edit of a limits file (most of the time), generic JSON edits, or
    file-level damage (bytes, size, the file replaced by a FIFO or a symlink)."""
    how = rng.choices(["struct", "json", "file", "bytes"], [70, 14, 6, 10])[0]
    if how == "json":
        return mutate_json(data, rng, mut, "limits")
    if how == "file":
        kind = rng.choice(["fifo", "link-model", "link-dangling", "link-loop", "empty"])
        mut.note(f"limits.file-{kind}")
        if kind == "empty":
            return b""
        mut.files.pop(mut.target, None)
        if kind == "fifo":
            mut.fifos.append(mut.target)
        else:
            model = next((n for n in sorted(mut.files) if n != mut.target), "missing")
            mut.links[mut.target] = {"link-model": model, "link-dangling": "nowhere.json",
                                     "link-loop": mut.target}[kind]
        return data
    if how == "bytes":
        kind = rng.choices(["non-utf8", "huge", "nul", "utf16"], [4, 1, 2, 2])[0]
        mut.note(f"limits.bytes-{kind}")
        if kind == "non-utf8":
            i = data.find(b'"', rng.randrange(max(len(data), 1)))
            i = i if i >= 0 else len(data) // 2
            return data[:i + 1] + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80"]) + \
                data[i + 1:]
        if kind == "huge":  # over converter.passes.targets.MAX_LIMITS_BYTES (16 MiB)
            return data.rstrip()[:-1] + b', "pad": "' + b"x" * (17 << 20) + b'"}'
        if kind == "nul":
            return data + b"\x00"
        return data.decode("utf-8").encode("utf-16")
    try:
        doc = json.loads(data)
        assert isinstance(doc, dict)
    except (ValueError, AssertionError):
        return mutate_json(data, rng, mut, "limits")
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mut.note("limits." + _structural(doc, rng))
    return dumps(doc, rng).encode("utf-8", "surrogatepass")
