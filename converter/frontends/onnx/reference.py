"""Running an ONNX model in onnxruntime, optionally keeping every intermediate value. The
session runs in a forked child (`converter.core.isolate`), so a model that crashes onnxruntime is
one `NativeCrash` error.

External data is read by onnxruntime from the model's folder; where `allow_roots` lets it lie
elsewhere (`converter.core.confine`), the model is run from memory with that data inline.

With `intermediates=True` every output of every node of the main graph is added as a graph
output (types from ONNX shape inference when it knows them) and the model is run with graph
optimizations disabled, so each value is what its node computes. Values inside subgraphs
(If/Loop/Scan bodies) and non-tensor values (sequences, maps) are not collected. The model is
serialized in memory for this, so it is limited to protobuf's 2 GiB.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.errors import ReferenceFailed, exception_text
from converter.core.files import open_regular, read_at
from converter.core.isolate import isolated
from converter.frontends.base import SourceRun


def _label(model: Any) -> str:
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    return "the model"


def _session(model: Any, threads: int, optimize: bool, label: str) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # fatal only: errors reach Python as exceptions
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        return ort.InferenceSession(model, sess_options=opts,
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
        raise ReferenceFailed(f"onnxruntime could not load {label}: "
                              f"{exception_text(exc)}") from exc


def _with_allowed_data(model: Any) -> Any:
    """A model path whose external data may lie in folders `converter.core.confine.allowed_roots`
    allows, as the bytes of the model with that data inline (onnxruntime and onnx.load only
    read external data inside the model's own folder); else `model` unchanged."""
    from converter.core.confine import current_roots

    if not isinstance(model, (str, os.PathLike)) or not current_roots():
        return model
    from onnx import TensorProto
    from onnx.external_data_helper import uses_external_data

    from converter.frontends.onnx.reader import load_proto
    from converter.frontends.onnx.tensors import safe_external_path

    proto, base_dir, _ = load_proto(model)
    tensors = [t for t in proto.graph.initializer if uses_external_data(t)]
    if not tensors or base_dir is None:
        return model
    for tensor in tensors:
        info = {e.key: e.value for e in tensor.external_data}
        path = safe_external_path(base_dir, info.get("location", ""), tensor.name)
        with open_regular(path, "the external data file") as f:  # converter.core.files
            offset = int(info.get("offset", 0) or 0)
            length = int(info["length"]) if info.get("length") else \
                os.fstat(f.fileno()).st_size - offset
            raw = bytes(read_at(f, offset, length, path, "the external data file"))
        del tensor.external_data[:]
        tensor.data_location = TensorProto.DEFAULT
        tensor.raw_data = raw
    return proto.SerializeToString()


def _run(sess: Any, names: list[str], feeds: dict[str, np.ndarray], label: str) -> Any:
    try:
        return sess.run(names, feeds)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
        raise ReferenceFailed(f"onnxruntime could not run {label}: "
                              f"{exception_text(exc)}") from exc


def _onnx_feeds(proto_inputs: list[str], source: Any, inputs: Mapping[str, np.ndarray]
                ) -> dict[str, np.ndarray]:
    feeds: dict[str, np.ndarray] = {}
    for name in proto_inputs:
        if name in inputs:
            feeds[name] = np.asarray(inputs[name])
        elif name in source.constants:  # pinned inputs
            feeds[name] = np.asarray(source.constants[name])
    return feeds


def run_onnx(model: str | os.PathLike[str] | bytes | Any, source: Any,
             inputs: Mapping[str, np.ndarray], *, intermediates: bool = False,
             threads: int = 0) -> SourceRun:
    """Run an ONNX model (path, bytes or ModelProto) in onnxruntime on CPU, in a forked
    child (`converter.core.isolate`): a crash inside onnxruntime is a `NativeCrash`
    ("onnxruntime crashed running ..."), not the end of this process."""
    import onnxruntime  # noqa: F401 - imported once here, not in every child

    label = _label(model)
    return isolated(lambda: _run_onnx(model, source, inputs, intermediates, threads, label),
                    framework="onnxruntime", label=label)


def _run_onnx(model: Any, source: Any, inputs: Mapping[str, np.ndarray], intermediates: bool,
              threads: int, label: str) -> SourceRun:
    import onnx

    notes: list[str] = []
    out_names = [vi.name for vi in source.outputs]
    model = _with_allowed_data(model)
    if not intermediates:
        if isinstance(model, onnx.ModelProto):
            model = model.SerializeToString()
        sess = _session(str(model) if isinstance(model, os.PathLike) else model, threads, True,
                        label)
        feeds = _onnx_feeds([i.name for i in sess.get_inputs()], source, inputs)
        start = time.perf_counter()
        values = _run(sess, out_names, feeds, label)
        seconds = time.perf_counter() - start
        return SourceRun(dict(zip(out_names, (np.asarray(v) for v in values), strict=True)),
                         {}, seconds)

    if isinstance(model, onnx.ModelProto):
        proto = model
    elif isinstance(model, (bytes, bytearray)):
        proto = onnx.load_from_string(bytes(model))
    else:
        proto = onnx.load(str(model), load_external_data=True)
    proto = _with_all_outputs(proto, notes)
    sess = _session(proto.SerializeToString(), threads, False, label)
    names = [o.name for o in sess.get_outputs()]
    feeds = _onnx_feeds([i.name for i in sess.get_inputs()], source, inputs)
    start = time.perf_counter()
    values = _run(sess, names, feeds, label)
    seconds = time.perf_counter() - start
    by_name = {n: v for n, v in zip(names, values, strict=True) if isinstance(v, np.ndarray)}
    outputs = {n: np.asarray(by_name[n]) for n in out_names}
    order = [o for node in proto.graph.node for o in node.output if o in by_name]
    inter = {n: by_name[n] for n in order}
    return SourceRun(outputs, inter, seconds, tuple(notes))


def _with_all_outputs(proto: Any, notes: list[str]) -> Any:
    """A copy of `proto` whose graph outputs are every node output of the main graph."""
    import onnx

    model = onnx.ModelProto()
    model.CopyFrom(proto)
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        types = {vi.name: vi for vi in inferred.graph.value_info}
    except Exception as exc:  # noqa: BLE001 - inference is only a help here
        notes.append(f"ONNX shape inference failed ({type(exc).__name__}); intermediate "
                     "outputs were added without types")
        types = {}
    existing = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if not name or name in existing:
                continue
            existing.add(name)
            vi = types.get(name)
            if vi is not None and vi.type.HasField("tensor_type"):
                model.graph.output.append(vi)
            elif vi is None:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
    return model


