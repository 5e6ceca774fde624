"""Untrusted input through the real CLI: the run-time memory budget is checked before anything
runs a graph (the fuzzer's Expand reproducer is refused without starting a session);
--max-tensor-bytes and friends raise the limits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli.untrusted.cli_run import (
    capped_cli,
    invoke,
    one_error,
    one_error_line,
)
from tests.timing import cpu_seconds

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


# -- the run-time memory budget: checked before anything runs a graph -------------------------


def _expand_model(path: Path, rows: int) -> Path:
    """The fuzzer's reproducer (seed 20, onnx-00844): Expand of x[3, 1] by an initializer
    shape [rows, 3, 4]; nothing is folded, so conversion passes whatever `rows` is."""
    shape = numpy_helper.from_array(np.array([rows, 3, 4], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"])], "expand",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape])
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                      ir_version=8), path)
    return path


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """onnxruntime sessions started in this process (each one recorded, then made)."""
    import onnxruntime

    made: list[str] = []
    real = onnxruntime.InferenceSession

    def session(*args: Any, **kwargs: Any) -> Any:
        made.append(str(args[0])[:60])
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    return made


HUGE_WORDS = ("the output of expand (operation #1 of 1, graph output 'y'; float32 "
              "[2147483647, 3, 4]) would take 96.0 GiB (103,079,215,056 bytes), over the budget "
              "of 2 GiB for one tensor of a run (hint: raise it with --max-tensor-bytes)")


def test_expand_reproducer_is_refused_before_running(tmp_path: Path,
                                                     sessions: list[str]) -> None:
    """validate and run of a 200-byte model whose Expand asks for 96 GiB: one line naming the
    operand, the amount, the budget and the flag, within seconds under a 2 GiB address-space
    cap (onnxruntime used to try the allocation: 'Failed to allocate memory')."""
    model = _expand_model(tmp_path / "expand.onnx", 2**31 - 1)
    assert model.stat().st_size < 300
    with cpu_seconds(children=True) as spent:
        line = one_error_line(capped_cli("validate", model))
    assert spent.seconds < 20  # CPU seconds of the CLI's process
    assert line == f"error: running {model}: {HUGE_WORDS}"
    # in this process: no onnxruntime session was started for it
    assert one_error(invoke("validate", model)) == line and sessions == []
    folder = tmp_path / "graph"
    assert invoke("convert", model, "-o", folder, "--target", "spec").exit_code == 0
    np.savez(tmp_path / "x.npz", x=np.ones((3, 1), np.float32))
    for backend in ("reference", "onnxruntime"):
        out = tmp_path / "o.npz"
        line = one_error_line(capped_cli("run", folder, "--inputs", tmp_path / "x.npz",
                                           "-o", out, "--backend", backend))
        assert line == f"error: running {folder}: {HUGE_WORDS}" and not out.exists()
        one_error(invoke("run", folder, "--inputs", tmp_path / "x.npz", "-o", out,
                         "--backend", backend))
    assert sessions == []
    assert list(tmp_path.glob("*.npz")) == [tmp_path / "x.npz"]


def test_run_budget_flags_raise_the_limits(tmp_path: Path) -> None:
    """A 47 KiB Expand output: refused under --max-tensor-bytes 16KiB, and the peak under
    --max-run-bytes 16KiB; validated (onnxruntime vs the reference backend) and run (numpy's
    broadcast as the oracle) once the flags raise them."""
    model = _expand_model(tmp_path / "small.onnx", 1000)
    line = one_error(invoke("validate", model, "--max-tensor-bytes", "16KiB"))
    assert "float32 [1000, 3, 4]) would take 46.9 KiB (48,000 bytes), over the budget of " \
        "16 KiB for one tensor of a run (hint: raise it with --max-tensor-bytes)" in line
    line = one_error(invoke("validate", model, "--max-tensor-bytes", "64KiB",
                            "--max-run-bytes", "16KiB"))
    assert "over the budget of 16 KiB for one run (hint: raise it with --max-run-bytes)" \
        in line
    r = invoke("validate", model, "--max-tensor-bytes", "64KiB", "--max-run-bytes", "64KiB")
    assert r.exit_code == 0, r.output
    folder = tmp_path / "graph"
    assert invoke("convert", model, "-o", folder).exit_code == 0
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    np.savez(tmp_path / "x.npz", x=x)
    out = tmp_path / "o.npz"
    line = one_error(invoke("run", folder, "--inputs", tmp_path / "x.npz", "-o", out,
                            "--max-tensor-bytes", "16KiB"))
    assert "(hint: raise it with --max-tensor-bytes)" in line and not out.exists()
    r = invoke("run", folder, "--inputs", tmp_path / "x.npz", "-o", out,
               "--max-tensor-bytes", "64KiB")
    assert r.exit_code == 0, r.output
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["y"], np.broadcast_to(x, (1000, 3, 4)))
