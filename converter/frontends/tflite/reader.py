"""TFLite (LiteRT) reader: a `.tflite` flatbuffer -> `TFLiteModel` and a `SourceGraph`.

What it does:
- parses the flatbuffer with the `tflite` accessor bindings (a core dependency: reading
  needs no LiteRT); operators become `ir.Node`s (`operators`: operator codes, custom ops,
  builtin options decoded by `options` with every schema default filled in), tensors
  `ir.TensorInfo`s and constants (`tensors`: quantization, sparsity, INT4/bfloat16
  unpacking, densified sparse constants), all through the bounds-checked `model_file`;
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
- quantization parameters (scale, zero_point, quantized dimension, details type) and
  sparsity are kept per tensor in `TensorInfo`, reachable from each node
  (`Node.input_infos` / `output_infos`).

Truncated or hostile files raise `InvalidModel` naming the file; vector lengths and buffer
ranges are checked against the file size so a hostile file cannot make the reader allocate
more than the file holds (plus densified sparse tensors, bounded by their declared shape).
The structure the importer relies on is checked here too, as LiteRT runs operators in file
order: every tensor an operator reads is defined before it (a subgraph input, a constant, a
variable or an earlier operator's output), and so is every subgraph output. (Input/output
counts per op are checked by the importer: `op_mappings/tflite/_checks.py`.)

The records it returns live in `records` and `converter.core.ir`, the schema tables in
`tables` (options decoding in `options`).

Restrictions: see `tensors` (external buffer files are rejected; some dtypes are kept
without data).
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

from converter.core.budgets import nbytes
from converter.core.errors import InvalidModel
from converter.core.ir import Node, TensorInfo, ValueInfo
from converter.frontends.base import read_model_file
from converter.frontends.free_dims import InputDims
from converter.frontends.tflite.inputs import declared_shape, default_notes, resolve_inputs
from converter.frontends.tflite.model_file import ModelFile, read_only
from converter.frontends.tflite.operators import OperatorCode, read_operator
from converter.frontends.tflite.records import (
    SignatureDef,
    TFLiteModel,
    TFLiteSourceGraph,
    TFLiteSubgraph,
)
from converter.frontends.tflite.tables import NUMPY_READABLE
from converter.frontends.tflite.tensors import read_tensor, tensor_value, unread_note

# -- reading ------------------------------------------------------------------------------


class _Reader(ModelFile):
    """Reads the whole model: operator codes, buffers, metadata, signatures and every
    subgraph. `aliases` names tensors per subgraph index and tensor index (a SignatureDef's
    aliases)."""

    def __init__(self, data: Any, label: str,
                 aliases: Mapping[int, Mapping[int, str]]) -> None:
        super().__init__(data, label)
        self.aliases = aliases

    # -- model -------------------------------------------------------------------------
    def read(self) -> TFLiteModel:
        if self.size < 8:
            raise self.fail("not a TFLite model (file shorter than 8 bytes)")
        ident = bytes(self.data[4:8])
        if ident != b"TFL3":
            raise self.fail(f"not a TFLite model (file identifier {ident!r}, expected b'TFL3')")
        model = tflite.Model.GetRootAs(self.data, 0)
        self.model = model
        opcodes: list[OperatorCode] = []
        for i in range(self.count(model.OperatorCodesLength(), "operator_codes")):
            oc = model.OperatorCodes(i)
            code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            custom = oc.CustomCode()
            opcodes.append((code, custom.decode("utf-8", "replace") if custom else None,
                            int(oc.Version())))
        self.opcodes = opcodes
        self.buffers = [model.Buffers(i) for i in range(
            self.count(model.BuffersLength(), "buffers"))]
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
            info = read_tensor(self, i, t, names[i], stored[i])
            tensors.append(info)
            value = tensor_value(self, info)
            if value is not None and i not in inputs:
                consts[info.name] = value
            elif info.is_variable and i not in inputs and info.dtype in NUMPY_READABLE:
                self.budgets.check("max_constant_bytes",  # before allocating the zeros
                               nbytes(info.shape, np.dtype(info.dtype).itemsize),
                               f"{self.label}: the variable tensor {info.tensor_name!r} "
                               "would start as zeros of")
                consts[info.name] = read_only(np.zeros(info.shape, info.dtype))
                self.warnings.append(f"variable tensor {info.tensor_name!r} starts as zeros")
        nodes = []
        for k in range(self.count(sg.OperatorsLength(), f"subgraph {s} operators")):
            nodes.append(read_operator(self, self.opcodes, s, k, sg.Operators(k), tensors))
        defined = {i for i, t in enumerate(tensors) if t.name in consts} | set(inputs)
        self.check_defined(s, nodes, tensors, outputs, defined)
        name = (sg.Name() or b"").decode("utf-8", "replace")
        return TFLiteSubgraph(s, name, tuple(tensors), inputs, outputs, tuple(nodes)), consts

    def check_defined(self, s: int, nodes: Sequence[Node], tensors: Sequence[TensorInfo],
                      outputs: tuple[int, ...], defined: set[int]) -> None:
        """Every tensor an operator reads is defined before it (a subgraph input, a constant,
        a variable or an earlier operator's output), and so is every subgraph output:
        LiteRT runs the operators in file order."""
        for node in nodes:
            for info in node.input_infos:
                if info is not None and info.index not in defined:
                    raise self.fail(f"operator {node.index} ({node.op_type}) of subgraph {s} "
                                    f"reads tensor {info.index} ({info.tensor_name!r}"
                                    f"{unread_note(info)}), which no earlier operator, subgraph "
                                    "input or constant defines")
            defined.update(t.index for t in node.output_infos)
        for i in outputs:
            if i not in defined:
                raise self.fail(f"subgraph {s} output tensor {i} ({tensors[i].tensor_name!r}"
                                f"{unread_note(tensors[i])}) is not defined by any operator, "
                                "subgraph input or constant")

    def value_names(self, s: int, stored: list[str], inputs: tuple[int, ...],
                    outputs: tuple[int, ...]) -> list[str]:
        """Unique value names: graph IO first (signature aliases when chosen), then others."""
        chosen = self.aliases.get(s, {})
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
               aliases: Mapping[int, Mapping[int, str]] | None = None) -> TFLiteModel:
    """Parse a whole `.tflite` file (every subgraph); InvalidModel when it is malformed.
    `aliases` names tensors by subgraph index and tensor index (a SignatureDef's aliases;
    other tensors are named by their tensor names)."""
    data, label = _open(model)
    reader = _Reader(data, label, aliases or {})
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
    `settings` (the conversion settings handlers see as `ctx.settings`) are kept in
    `TFLiteSourceGraph.settings`.
    """
    if isinstance(model, (bytearray, memoryview)):
        model = bytes(model)
    probe, sig = _signature_maps(model, signature)
    index = 0
    tfm = probe
    if sig is not None:
        index = sig.subgraph_index
        aliases = {t: n for n, t in sig.inputs + sig.outputs if n}
        tfm = read_model(model, aliases={index: aliases})
    sub = tfm.subgraphs[index]
    label = tfm.label
    consts = dict(tfm.constants[index])

    declared = [sub.tensors[i] for i in sub.inputs]
    inputs, stored = resolve_inputs(declared, dict(input_shapes or {}),
                                     dict(input_dims or {}), label)
    outputs = []
    for i in sub.outputs:
        t = sub.tensors[i]
        outputs.append(ValueInfo(t.name, t.dtype, declared_shape(t), declared_shape(t)))
    tensors = {t.name: t for t in sub.tensors}
    return TFLiteSourceGraph(
        sub.name or (sig.key if sig else "main"), tuple(inputs), tuple(outputs), sub.nodes,
        MappingProxyType(consts), MappingProxyType({"tflite": tfm.version}),
        source_format="tflite", producer=tfm.description, warnings=tfm.warnings + default_notes(stored),
        model=tfm,
        subgraph_index=index, tensors=MappingProxyType(tensors),
        signature=sig.key if sig else None, settings=MappingProxyType(dict(settings or {})),
        stored_dims=stored)
