"""Running a TFLite model in the LiteRT interpreter, optionally keeping every intermediate
value. The interpreter runs in a forked child (`converter.core.isolate`), so a model that crashes
LiteRT is one `NativeCrash` error.

With `intermediates=True` the interpreter is created with
`experimental_preserve_all_tensors=True` and without the default delegates (delegated
partitions would not keep their tensors); only the main subgraph's tensors are collected; a
signature whose subgraph is not the main one is run through its signature runner without
intermediates.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.errors import ConversionError, ReferenceFailed, exception_text
from converter.core.install import install_hint
from converter.core.isolate import isolated
from converter.frontends.base import SourceRun
from converter.frontends.tflite.options import EXTRA


class LiteRTMissing(ConversionError):
    """The LiteRT interpreter (the `tflite` extra) is not installed; converting TFLite
    models does not need it, running the original (validation) does."""

    reason_code = "missing_dependency"
    default_hint = ""


def run_tflite(model: str | os.PathLike[str] | bytes, source: Any,
               inputs: Mapping[str, np.ndarray], *, intermediates: bool = False,
               threads: int = 0) -> SourceRun:
    """Run a TFLite model in the LiteRT interpreter (`ai_edge_litert`, imported here only:
    the `tflite` extra). Raises `LiteRTMissing` when it is not installed. The interpreter
    is loaded and run in a forked child (`converter.core.isolate`): a crash inside LiteRT is a
    `NativeCrash` ("LiteRT crashed running ..."), not the end of this process."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError as exc:
        raise LiteRTMissing("running TFLite models (validation) needs the LiteRT interpreter, "
                            f"which is not installed: {install_hint(EXTRA)}") from exc
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
    return isolated(lambda: _load_and_run(Interpreter, kwargs, label, source, inputs,
                                          intermediates),
                    framework="LiteRT", label=label)


def _load_and_run(interpreter: Any, kwargs: dict[str, Any], label: str, source: Any,
                  inputs: Mapping[str, np.ndarray], intermediates: bool) -> SourceRun:
    with native_stderr_silenced():
        try:
            interp = interpreter(**kwargs)
        except Exception as exc:  # noqa: BLE001 - LiteRT raises ValueError/RuntimeError
            raise ReferenceFailed(f"LiteRT could not load {label}: {exception_text(exc)}"
                                  ) from exc
        try:
            return _run(interp, source, inputs, intermediates)
        except Exception as exc:  # noqa: BLE001 - LiteRT raises ValueError/RuntimeError
            raise ReferenceFailed(f"LiteRT could not run {label}: {exception_text(exc)}"
                                  ) from exc


@contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """Within the block, what native code writes to file descriptor 2 is dropped: LiteRT's
    C++ logging prints "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." (and other
    log lines) there, while its errors reach Python in the exceptions it raises. Python's
    own `sys.stderr` is flushed before and after, so nothing of it is lost; an enabled
    `faulthandler` keeps writing to the real stderr (a crash inside LiteRT still says
    where)."""
    import faulthandler

    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 (a detached process): nothing to silence
        yield
        return
    dumps = faulthandler.is_enabled()
    real = os.fdopen(saved, "w", closefd=False)
    try:
        if dumps:
            faulthandler.enable(file=real, all_threads=True)
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        if dumps:
            try:
                faulthandler.enable(file=sys.stderr, all_threads=True)
            except (AttributeError, ValueError, OSError):  # stderr is no file (captured)
                faulthandler.enable(file=2, all_threads=True)
        real.close()
        os.close(saved)


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
