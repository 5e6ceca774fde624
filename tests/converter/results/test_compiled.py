"""`ConversionResult.compile` / `CompiledModel`: the run budgets measured once per graph, the
feeds checked against precomputed names, dtypes and shapes with `ConversionResult.run`'s
messages, numpy inputs of the graph's dtype handed to the backend without a copy, outputs in
the source dtypes; `ConversionResult.run` keeps one session per (backend, device, threads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from converter.api import CompiledModel, convert
from converter.core import budgets
from converter.core.budgets import Budgets
from converter.core.errors import BudgetExceeded, InvalidModel
from converter.core.webnn import run_memory
from converter.results.result import ConversionResult
from tests.converter.results import models
from tests.converter.results.models import X

BACKENDS = ("reference", "onnxruntime")


@pytest.fixture
def plus_one(tmp_path: Path) -> ConversionResult:
    return models.plus_one(tmp_path)


@pytest.fixture
def logical_not(tmp_path: Path) -> ConversionResult:
    """Not(x), x and y bool [3]: carried as uint8 in the graph."""
    graph = helper.make_graph(
        [helper.make_node("Not", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.BOOL, [3])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [3])])
    path = tmp_path / "not.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return convert(path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_session_runs_like_result_run(plus_one: ConversionResult, backend: str) -> None:
    session = plus_one.compile(backend, threads=1 if backend != "reference" else 0)
    assert isinstance(session, CompiledModel)
    assert session.input_names == ["x"] and session.output_names == ["y"]
    for _ in range(3):
        out = session.run({"x": X})
        assert list(out) == ["y"] and out["y"].dtype == np.float32
        np.testing.assert_array_equal(out["y"], X + 1)
    np.testing.assert_array_equal(plus_one.run({"x": X}, backend=backend)["y"], X + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_source_dtypes_in_and_out(logical_not: ConversionResult, backend: str) -> None:
    """bool in and out (uint8 inside), a list and 0/1 floats converted like `run` does."""
    session = logical_not.compile(backend)
    for feed in (np.array([True, False, True]), [1, 0, 1], np.array([0.5, 0.0, 2.0])):
        out = session.run({"x": feed})["y"]
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out, [False, True, False])
    assert logical_not.run({"x": [0, 0, 1]}, backend=backend)["y"].tolist() == [
        True, True, False]


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_feeds_are_one_error(plus_one: ConversionResult, backend: str) -> None:
    session = plus_one.compile(backend)
    names = r"run: inputs do not match the model \(missing \['x'\], unexpected \['z'\]\)"
    with pytest.raises(InvalidModel, match=names):
        session.run({"z": X})
    with pytest.raises(InvalidModel, match=names):
        plus_one.run({"z": X}, backend=backend)
    with pytest.raises(InvalidModel, match=r"unexpected \['z'\]"):
        session.run({"x": X, "z": X})
    shape = r"run: input 'x' is float32\[3, 2\], the model expects float32\[2, 3\]"
    with pytest.raises(InvalidModel, match=shape):
        session.run({"x": X.reshape(3, 2)})
    with pytest.raises(InvalidModel, match=shape):
        plus_one.run({"x": X.reshape(3, 2)}, backend=backend)
    np.testing.assert_array_equal(session.run({"x": X.astype(np.float64)})["y"], X + 1)


def _counting_estimates(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    real = run_memory.estimate

    def counted(graph: Any, **kwargs: Any) -> run_memory.RunMemory:
        calls.append(graph)
        return real(graph, **kwargs)

    monkeypatch.setattr(run_memory, "estimate", counted)
    return calls


@pytest.mark.parametrize("backend", BACKENDS)
def test_budgets_are_measured_once_per_graph(plus_one: ConversionResult, backend: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_estimates(monkeypatch)
    session = plus_one.compile(backend)
    for _ in range(5):
        session.run({"x": X})
        plus_one.run({"x": X}, backend=backend)
    plus_one.compile(backend).run({"x": X})
    assert calls == [plus_one.graph]


@pytest.mark.parametrize("backend", BACKENDS)
def test_budgets_are_checked_before_anything_runs(plus_one: ConversionResult, backend: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A session is not made over the active budgets; `ConversionResult.run` checks the
    budgets active at each call (against the measured estimate), a session the ones active
    when it was made."""
    compiled: list[Any] = []
    import converter.results.compiled as compiled_module

    real = compiled_module.compile_executable
    monkeypatch.setattr(compiled_module, "compile_executable",
                        lambda *a: compiled.append(a) or real(*a))
    tight = Budgets(max_tensor_bytes=16)  # the 24-byte input is over it
    with budgets.using(tight), pytest.raises(BudgetExceeded, match="max_tensor_bytes"):
        plus_one.compile(backend)
    with budgets.using(tight), pytest.raises(BudgetExceeded, match="max_tensor_bytes"):
        plus_one.run({"x": X}, backend=backend)
    assert compiled == []
    session = plus_one.compile(backend)
    np.testing.assert_array_equal(plus_one.run({"x": X}, backend=backend)["y"], X + 1)
    with budgets.using(tight):
        with pytest.raises(BudgetExceeded, match="max_tensor_bytes"):
            plus_one.run({"x": X}, backend=backend)
        np.testing.assert_array_equal(session.run({"x": X})["y"], X + 1)


class _Recorder:
    """Stands in for onnxruntime's C++ session: keeps the feeds it was given."""

    def __init__(self, session: Any) -> None:
        self.session, self.feeds = session, []

    def run(self, names: Any, feeds: dict[str, np.ndarray], options: Any) -> Any:
        self.feeds.append(dict(feeds))
        return self.session.run(names, feeds, options)


def test_numpy_inputs_reach_onnxruntime_without_a_copy(plus_one: ConversionResult) -> None:
    session = plus_one.compile("onnxruntime", threads=1)
    recorder = _Recorder(session.executable._core)  # type: ignore[attr-defined]
    session.executable._core = recorder  # type: ignore[attr-defined]
    x = X.copy()
    np.testing.assert_array_equal(session.run({"x": x})["y"], X + 1)
    assert recorder.feeds[-1]["x"] is x
    strided = np.zeros((2, 6), np.float32)[:, ::2]  # onnxruntime copies these itself
    strided[...] = X
    for layout in (strided, np.asfortranarray(X)):
        np.testing.assert_array_equal(session.run({"x": layout})["y"], X + 1)
        assert recorder.feeds[-1]["x"] is layout
    np.testing.assert_array_equal(session.executable.run({"x": strided})["y"], X + 1)
    assert recorder.feeds[-1]["x"].flags.c_contiguous  # the executable's own run: C order
    as_float64 = X.astype(np.float64)  # converted to the graph's float32
    np.testing.assert_array_equal(session.run({"x": as_float64})["y"], X + 1)
    assert recorder.feeds[-1]["x"].dtype == np.float32


def test_run_keeps_one_session_per_backend_device_and_threads(
        plus_one: ConversionResult, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[str, str, int]] = []
    real = ConversionResult.compile

    def counted(self: ConversionResult, backend: str = "reference", device: str = "cpu",
                threads: int = 0) -> CompiledModel:
        made.append((backend, device, threads))
        return real(self, backend, device, threads)

    monkeypatch.setattr(ConversionResult, "compile", counted)
    for _ in range(3):
        plus_one.run({"x": X}, backend="onnxruntime")
        plus_one.run({"x": X}, backend="onnxruntime", threads=1)
        plus_one.run({"x": X})
    assert made == [("onnxruntime", "cpu", 0), ("onnxruntime", "cpu", 1),
                    ("reference", "cpu", 0)]
    noted = plus_one.with_graph(plus_one.graph, notes=["n"])
    noted.run({"x": X}, backend="onnxruntime")
    assert len(made) == 3  # the same graph: the sessions are shared


def test_destroyed_graph_is_not_run(plus_one: ConversionResult) -> None:
    from converter.core.webnn.errors import MLInvalidStateError

    session = plus_one.compile("onnxruntime", threads=1)
    plus_one.graph.destroy()
    with pytest.raises(MLInvalidStateError, match="destroyed"):
        session.run({"x": X})
