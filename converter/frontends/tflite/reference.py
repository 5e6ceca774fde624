"""Running a TFLite model in the LiteRT interpreter, optionally keeping every intermediate
value.

With `intermediates=True` the interpreter is created with
`experimental_preserve_all_tensors=True` and without the default delegates (delegated
partitions would not keep their tensors); only the main subgraph's tensors are collected; a
signature whose subgraph is not the main one is run through its signature runner without
intermediates.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConversionError, ReferenceFailed, exception_text
from ..base import SourceRun
from .options import EXTRA_HINT


class LiteRTMissing(ConversionError):
    """The LiteRT interpreter (the `tflite` extra) is not installed; converting TFLite
    models does not need it, running the original (validation) does."""

    reason_code = "missing_dependency"
    default_hint = ""


def run_tflite(model: str | os.PathLike[str] | bytes, source: Any,
               inputs: Mapping[str, np.ndarray], *, intermediates: bool = False,
               threads: int = 0) -> SourceRun:
    """Run a TFLite model in the LiteRT interpreter (`ai_edge_litert`, imported here only:
    the `tflite` extra). Raises `LiteRTMissing` when it is not installed."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError as exc:
        raise LiteRTMissing("running TFLite models (validation) needs the LiteRT interpreter, "
                            f"which is not installed: {EXTRA_HINT}") from exc
    kwargs: dict[str, Any] = {}
    if isinstance(model, (bytes, bytearray)):
        kwargs["model_content"] = bytes(model)
    else:
        kwargs["model_path"] = str(Path(model))
    if threads:
        kwargs["num_threads"] = threads
    if intermediates:
        kwargs["experimental_preserve_all_tensors"] = True
        kwargs["experimental_op_resolver_type"] = \
            OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    label = os.fspath(model) if isinstance(model, (str, os.PathLike)) else "the model"
    try:
        interp = Interpreter(**kwargs)
    except Exception as exc:  # noqa: BLE001 - LiteRT raises ValueError/RuntimeError
        raise ReferenceFailed(f"LiteRT could not load {label}: {exception_text(exc)}"
                              ) from exc
    try:
        return _run(interp, source, inputs, intermediates)
    except Exception as exc:  # noqa: BLE001 - LiteRT raises ValueError/RuntimeError
        raise ReferenceFailed(f"LiteRT could not run {label}: {exception_text(exc)}"
                              ) from exc


def _run(interp: Any, source: Any, inputs: Mapping[str, np.ndarray], intermediates: bool
         ) -> SourceRun:
    notes: list[str] = []
    index = int(getattr(source, "subgraph_index", 0))
    signature = getattr(source, "signature", None)
    out_names = [vi.name for vi in source.outputs]
    if index != 0 and signature:
        runner = interp.get_signature_runner(signature)
        start = time.perf_counter()
        res = runner(**{k: np.asarray(v) for k, v in inputs.items()})
        seconds = time.perf_counter() - start
        if intermediates:
            notes.append("intermediate values are only collected for the main subgraph")
        return SourceRun({n: np.asarray(res[n]) for n in out_names}, {}, seconds,
                         tuple(notes))
    tensors = source.tensors
    declared = {int(d["index"]): list(d["shape"]) for d in interp.get_input_details()}
    for vi in source.inputs:
        arr = np.asarray(inputs[vi.name])
        idx = tensors[vi.name].index
        if declared.get(idx) != list(arr.shape):
            interp.resize_tensor_input(idx, list(arr.shape))
    interp.allocate_tensors()
    for vi in source.inputs:
        interp.set_tensor(tensors[vi.name].index, np.asarray(inputs[vi.name]))
    start = time.perf_counter()
    interp.invoke()
    seconds = time.perf_counter() - start
    outputs = {n: np.array(interp.get_tensor(tensors[n].index)) for n in out_names}
    inter: dict[str, np.ndarray] = {}
    if intermediates:
        for node in source.nodes:
            for name in node.outputs:
                if not name or name in inter or name not in tensors:
                    continue
                try:
                    inter[name] = np.array(interp.get_tensor(tensors[name].index))
                except (ValueError, RuntimeError):
                    continue
    return SourceRun(outputs, inter, seconds, tuple(notes))
