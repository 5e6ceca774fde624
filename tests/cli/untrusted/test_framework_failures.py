"""Untrusted input through the real CLI: load failures and native crashes (SIGSEGV, SIGABRT)
of onnxruntime and LiteRT end as one `error: ` line, exit code 2, no traceback and no
faulthandler dump."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli.models import tiny_tflite
from tests.cli.untrusted.cli_run import (
    cli_env,
    invoke,
    one_error,
    one_error_line,
    raiser,
)
from tests.timing import HANG_GUARD_S

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


# -- load failures of the frameworks ------------------------------------------------------------


def test_onnxruntime_load_failures_are_one_line(tiny: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime as ort

    real = ort.InferenceSession

    def session(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, str):  # the original model, by path
            raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH :\n Load model failed")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", session)
    line = one_error(invoke("validate", tiny, "--dim", "batch=1"))
    assert f"onnxruntime could not load {tiny}: [ONNXRuntimeError]" in line

    def exported(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, bytes):  # the exported graph
            raise RuntimeError("Fail:\nType Error")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", exported)
    line = one_error(invoke("validate", tiny, "--dim", "batch=1", "--backend", "onnxruntime"))
    assert "onnxruntime could not load the exported graph: Fail: Type Error" in line


def test_litert_load_failures_are_one_line(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    model = tmp_path / "tiny.tflite"
    tiny_tflite(model)
    monkeypatch.setattr(interpreter, "Interpreter",
                        raiser(ValueError("Could not\u2028open\n'x'.")))
    line = one_error(invoke("validate", model))
    assert f"LiteRT could not load {model}: Could not\\u2028open 'x'." in line


# -- native crashes of the reference frameworks ------------------------------------------------


def _depthwise_without_bias(path: Path) -> Path:
    """Fuzz seed 23's finding, minimised: an int8 DEPTHWISE_CONV_2D 'y' whose bias input was
    dropped (`tflite.op-io(inputs:drop)`); LiteRT accepts two inputs and SIGSEGVs in
    `invoke()`."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S

    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 2], "int8", quant=Quant([0.05], [0]))
    w = mb.const("w", rng.integers(-100, 100, (1, 3, 3, 2)).astype(np.int8),
                 quant=Quant([0.01, 0.02], [0, 0], 3))
    y = mb.output(mb.tensor("y", [1, 4, 4, 2], "int8", quant=Quant([0.1], [0])))
    opts = S.DepthwiseConv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW, opts.depthMultiplier = S.Padding.SAME, 1, 1, 1
    opts.dilationHFactor = opts.dilationWFactor = 1
    mb.op("DEPTHWISE_CONV_2D", [x, w], [y], opts, version=3)
    path.write_bytes(mb.build())
    return path


def test_a_dropped_depthwise_bias_is_refused(tmp_path: Path) -> None:
    model = _depthwise_without_bias(tmp_path / "dw.tflite")
    line = one_error(invoke("validate", model))
    assert "[invalid_model] DEPTHWISE_CONV_2D 'y' (version 3): the operator lists 2 " \
           "input(s), DEPTHWISE_CONV_2D needs at least 3" in line


_UNCHECKED = """
import sys
import op_mappings.tflite._checks as checks
checks.io_problem = lambda node: None  # the importer accepts the model as it did before
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""


def test_a_litert_crash_is_one_line(tmp_path: Path) -> None:
    """With the importer's input-count check off, LiteRT runs the model and dies (SIGSEGV)
    in the forked child: one error line, exit 2, no traceback, no faulthandler dump."""
    pytest.importorskip("ai_edge_litert.interpreter")
    model = _depthwise_without_bias(tmp_path / "dw.tflite")
    proc = subprocess.run([sys.executable, "-c", _UNCHECKED, "validate", str(model)],
                          env=cli_env(), capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert one_error_line(proc) == (f"error: LiteRT crashed running {model} (SIGSEGV): the "
                                     "model is malformed or hits a LiteRT bug")


def test_an_onnxruntime_crash_is_one_line(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime as ort

    real = ort.InferenceSession

    def session(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, str):  # the original model, by path: dies as a native crash
            os.abort()
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", session)
    line = one_error(invoke("validate", tiny, "--dim", "batch=1"))
    assert line == (f"error: onnxruntime crashed running {tiny} (SIGABRT): the model is "
                    "malformed or hits an onnxruntime bug")
