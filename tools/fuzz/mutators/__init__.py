"""Mutators by kind, and `make_case`: one seed + one kind -> one mutant with its command.

Kinds (the kind of the file that is mutated): onnx, tflite (models, run with `convert`,
`inspect` or `validate`, some of them `--target NAME` and / or `--precision float16`), webnn,
webnn-json, manifest, weights, safetensors (the files of an exported graph, run with `run`,
sometimes `convert`/`inspect`, which must say what the file is; manifests and safetensors
metadata get their `sourceDataTypes` table mutated too), limits (an `opSupportLimits()` JSON
file given as `--target FILE` to `convert` / `validate` of a valid model). Each kind has a structure-aware mutator; every kind also gets generic byte mutations
(flips, truncation, ...) some of the time, and graph kinds sometimes lose a companion file
or get it replaced by a symlink to the canary or a FIFO. Some cases also get extreme
command-line values (`--dim batch=2147483648`).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from tools.fuzz.case import CANARY_LINK, Case
from tools.fuzz.mutators import json_mut, limits_mut, text_mut
from tools.fuzz.mutators.base import Mutation
from tools.fuzz.mutators.common import mutate_bytes
from tools.fuzz.seeds import Seed

MODEL_KINDS = ("onnx", "tflite")
GRAPH_KINDS = ("webnn", "webnn-json", "manifest", "weights", "safetensors")
KINDS = MODEL_KINDS + GRAPH_KINDS + ("limits",)
# How often each kind is picked (models carry most of the code).
WEIGHTS = {"onnx": 36, "tflite": 20, "webnn": 14, "webnn-json": 10, "manifest": 8,
           "weights": 4, "safetensors": 8, "limits": 8}
# How often a convert / validate of a model mutant is for a built-in target, and in float16
# (independently): most runs still cover the target-less float32 surface.
TARGETS = ("chromium-tflite", "chromium-dml", "chromium-coreml")
TARGET_RATE = 0.2
FLOAT16_RATE = 0.12


def _onnx(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    from tools.fuzz.mutators import onnx_mut

    return onnx_mut.mutate(data, rng, mut)


def _tflite(data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    from tools.fuzz.mutators import tflite_mut

    return tflite_mut.mutate(data, rng, mut)


STRUCTURED: dict[str, Callable[[bytes, random.Random, Mutation], bytes]] = {
    "onnx": _onnx, "tflite": _tflite, "webnn": text_mut.mutate,
    "webnn-json": json_mut.mutate_webnn_json, "manifest": json_mut.mutate_manifest,
    "weights": json_mut.mutate_weights, "safetensors": json_mut.mutate_safetensors,
    "limits": limits_mut.mutate_limits,
}


# How often a mutant gets only generic byte mutations (protobuf and JSON mostly stop at the
# parser then, flatbuffers and the WGWT blob go further), and bytes on top of a structured one.
BYTES_ONLY = {"onnx": 0.05, "tflite": 0.12, "webnn": 0.08, "webnn-json": 0.05, "manifest": 0.05,
              "weights": 0.3, "safetensors": 0.1, "limits": 0.0}
BYTES_ON_TOP = {"onnx": 0.04, "webnn-json": 0.04, "manifest": 0.04, "limits": 0.0}


def mutate_file(kind: str, data: bytes, rng: random.Random, mut: Mutation) -> bytes:
    """The structured mutator of `kind` (most of the time), generic bytes otherwise or on
    top; a structured mutator that cannot parse its input falls back to bytes."""
    if rng.random() >= BYTES_ONLY.get(kind, 0.1):
        try:
            data = STRUCTURED[kind](data, rng, mut)
        except Exception as exc:  # noqa: BLE001 - the mutator could not handle this input
            mut.note(f"{kind}.unparsed", type(exc).__name__)
            data, name = mutate_bytes(data, rng)
            mut.note(name)
            return data
        if rng.random() < BYTES_ON_TOP.get(kind, 0.1):
            data, name = mutate_bytes(data, rng)
            mut.note(name)
        return data
    data, name = mutate_bytes(data, rng)
    mut.note(name)
    return data


def companions(seed: Seed, rng: random.Random, mut: Mutation) -> None:
    """Graph seeds: drop a companion, or replace it by a symlink to the canary (outside the
    folder) or by a FIFO, or add a `model.safetensors` symlink (read first by discovery)."""
    graph = seed.kinds.get("webnn") or seed.kinds.get("webnn-json")
    others = [n for n in seed.files if n not in (mut.target, graph)]  # not the named file
    how = rng.choice(["drop", "link", "link", "fifo", "model-link"])
    if how == "model-link":
        mut.links["model.safetensors"] = rng.choice([CANARY_LINK, "../canary.bin"])
    elif not others:
        return
    else:
        name = rng.choice(others)
        mut.files.pop(name, None)
        if how == "link":
            mut.links[name] = rng.choice([CANARY_LINK, "../canary.bin"])
        elif how == "fifo":
            mut.fifos.append(name)
    mut.note(f"graph.companion-{how}")


def _npz(arrays: dict[str, object]) -> bytes:
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _lying_npy(shape: tuple[int, ...]) -> bytes:
    """An .npy whose header declares `shape` (float32) over 16 bytes of data."""
    header = repr({"descr": "<f4", "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\x00" * 16


def mutate_inputs(aux: dict[str, bytes], rng: random.Random, mut: Mutation) -> None:
    """The inputs .npz of `run`: other dtypes (objects too), shapes, names, a corrupt or
    lying file."""
    import io
    import zipfile

    import numpy as np

    with np.load(io.BytesIO(aux["inputs.npz"])) as z:
        arrays = {k: z[k] for k in z.files}
    name = rng.choice(sorted(arrays))
    how = rng.choice(["dtype", "dtype", "shape", "missing", "extra", "object", "corrupt",
                      "lying", "huge"])
    if how == "dtype":
        arrays[name] = arrays[name].astype(rng.choice(["float64", "int8", "bool", "complex64",
                                                       "U3", "float16", "uint64"]))
    elif how == "shape":
        a = arrays[name]
        arrays[name] = rng.choice([a[None], a.reshape(-1), np.zeros((0,) + a.shape[1:],
                                                                     a.dtype), a.sum()])
    elif how == "missing":
        del arrays[name]
    elif how == "extra":
        arrays[rng.choice(["extra", "evil\nname", "x" * 300])] = np.zeros(2, np.float32)
    elif how == "object":
        arrays[name] = np.array([{"a": 1}, None], dtype=object)
    if how in ("corrupt", "lying", "huge"):
        data = _npz(arrays)
        if how == "corrupt":
            data = data[:rng.randrange(len(data))]
        else:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as zf:
                for k, v in arrays.items():
                    raw = io.BytesIO()
                    np.save(raw, v)
                    zf.writestr(f"{k}.npy", _lying_npy((1 << 40,) if how == "lying" else
                                                       (1 << 14, 1 << 14)) if k == name
                                else raw.getvalue())
            data = buf.getvalue()
    else:
        data = _npz(arrays)  # object arrays are pickled
    aux["inputs.npz"] = data
    mut.note(f"inputs.{how}", name[:20])


EVIL_DIMS = ["0", "-1", "2147483648", "99999999999999999999", "1e3", "65536", "1.5", "",
             "\n1", "0x10"]


def mutate_args(options: list[str], rng: random.Random, mut: Mutation) -> list[str]:
    opts = list(options)
    values = [i for i in range(1, len(opts), 2) if opts[i - 1] == "--dim"]
    if values and rng.random() < 0.6:
        i = rng.choice(values)
        name = opts[i].partition("=")[0]
        opts[i] = f"{name}={rng.choice(EVIL_DIMS)}"
        mut.note("args.dim", opts[i][:24])
    else:
        flag = rng.choice(["--dim", "--shape", "--free-dim", "--pin"])
        value = rng.choice(["x=1", "batch=2147483647", "image=1,3,65536,65536", "a:99=1",
                            "x=1,2,3", "seq=100000000", "=1", "x==1", "\x1b=1"])
        opts += [flag, value]
        mut.note("args.add", f"{flag} {value}"[:24])
    return opts


def target_options(rng: random.Random, limits: str | None = None) -> list[str]:
    """`--target` (the limits file `limits`, else a built-in target TARGET_RATE of the time)
    and `--precision float16` (FLOAT16_RATE of the time)."""
    opts = []
    if limits is not None:
        opts += ["--target", limits]
    elif rng.random() < TARGET_RATE:
        opts += ["--target", rng.choice(TARGETS)]
    if rng.random() < FLOAT16_RATE:
        opts += ["--precision", "float16"]
    return opts


def model_command(seed: Seed, model: str, rng: random.Random, options: list[str],
                  limits: str | None = None) -> list[str]:
    """convert / inspect / validate of `model` (convert / validate only with a limits
    file)."""
    what = rng.choices(["convert", "inspect", "validate"],
                       [68, 17 if limits is None else 0, 15])[0]
    if what == "convert":
        fmt = rng.choices(["webnn", "all", "webnn-json", "js", "onnx"], [45, 25, 10, 12, 8])[0]
        argv = ["convert", model, "-o", "out", "--format", fmt]
        if rng.random() < 0.2:
            argv += ["--weights", "safetensors"]
        return argv + target_options(rng, limits) + options
    if what == "validate":
        return [what, model] + target_options(rng, limits) + options
    return [what, model]


def graph_command(seed: Seed, graph: str, rng: random.Random) -> list[str]:
    what = rng.choices(["run", "convert", "inspect"], [92, 5, 3])[0]
    if what == "run":
        backend = ["--backend", "onnxruntime"] if rng.random() < 0.25 else []
        return ["run", graph, "--inputs", "inputs.npz", "-o", "out.npz", *backend]
    if what == "convert":
        return ["convert", graph, "-o", "out"]
    return ["inspect", graph]


def make_case(index: int, seed: Seed, kind: str, rng: random.Random) -> Case:
    """Mutate `seed`'s file of `kind` and choose the command that runs it."""
    target = seed.kinds[kind]
    mut = Mutation(dict(seed.files), target)
    mut.files[target] = mutate_file(kind, seed.files[target], rng, mut)
    options = list(seed.options)
    if rng.random() < 0.05:
        options = mutate_args(options, rng, mut)
    aux = dict(seed.aux)
    if seed.is_graph:
        if rng.random() < 0.08:
            companions(seed, rng, mut)
        if rng.random() < 0.06 and "inputs.npz" in aux:
            mutate_inputs(aux, rng, mut)
        graph = seed.kinds.get("webnn") or seed.kinds["webnn-json"]
        argv = graph_command(seed, f"m/{graph}", rng)
    elif kind == "limits":
        argv = model_command(seed, f"m/{seed.model}", rng, options, f"m/{target}")
    else:
        argv = model_command(seed, f"m/{target}", rng, options)
    return Case(index, kind, seed.name, target, argv, mut.files, mut.links, mut.fifos, aux,
                mut.names)
