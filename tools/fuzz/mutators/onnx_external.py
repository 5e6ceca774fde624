"""ONNX external-data mutations (`external`): tensors moved to external data with locations
that escape the model folder (`../`, absolute paths, symlinks and FIFOs, the canary), bad
offsets and lengths, duplicate keys, and legitimate files."""

from __future__ import annotations

import random

import onnx
from onnx import TensorProto, numpy_helper

from tools.fuzz.case import CANARY_BYTES
from tools.fuzz.mutators.base import Mutation
from tools.fuzz.mutators.common import canary_paths
from tools.fuzz.mutators.onnx_walk import NUM_FIELDS, graphs


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
