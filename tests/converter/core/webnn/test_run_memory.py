"""`converter.core.webnn.run_memory`: the bytes of a run known before it runs, and the run budgets
(`max_tensor_bytes`, `max_run_bytes`) checked by the Python API before anything executes a
graph.

Oracles: sizes written out by hand from the shapes the spec gives each operation (element
count x bytes per element, two 4-bit values per byte) and the liveness rule of the module
docstring applied by hand to small chains; "never runs" is checked by replacing the
runners (`run_source`, `compile_graph`'s backends) with ones that fail the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save

from converter.api import BudgetExceeded, Budgets, convert, validate
from converter.core.budgets import DEFAULTS, using
from converter.core.webnn import ML, MLGraphBuilder
from converter.core.webnn.run_memory import check_run_memory, estimate, operand_bytes
from converter.validate import compile_graph

KiB, GiB = 1 << 10, 1 << 30


def _builder() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


def _chain(n: int = 3, size: int = 256) -> Any:
    """x[size] float32 -> relu -> ... (n times) -> y."""
    b = _builder()
    v = b.input("x", [size], "float32")
    for i in range(n):
        v = b.relu(v, label=f"r{i}")
    return b.build({"y": v})


def test_operand_bytes_exact() -> None:
    b = _builder()
    assert operand_bytes(b.input("a", [3, 5], "float16")) == 30
    assert operand_bytes(b.input("b", [7], "int64")) == 56
    assert operand_bytes(b.constant(np.zeros(5, np.int8), "int4")) == 3  # 5 nibbles
    assert operand_bytes(b.input("s", [], "float32")) == 4
    # no int64 overflow for absurd shapes: 2^31-1 x 2^31-1 x 2^31-1 float32
    huge = b.expand(b.input("c", [1, 1, 1], "float32"), [2**31 - 1] * 3)
    assert operand_bytes(huge) == (2**31 - 1) ** 3 * 4


def test_chain_peak_by_hand() -> None:
    """x (1 KiB, whole run); at relu #2 its input (relu #1) and output are alive: 2 KiB; the
    output y is kept: peak 1 + 2 KiB."""
    memory = estimate(_chain())
    assert memory.resident_bytes == KiB
    assert memory.largest_bytes == KiB
    assert memory.peak_bytes == 3 * KiB
    assert memory.peak_at == "relu 'r1', operation #2 of 3"
    # every value kept (the divergence search): x + 3 outputs
    assert estimate(_chain(), keep_all=True).peak_bytes == 4 * KiB


def test_fan_out_keeps_a_value_until_its_last_reader() -> None:
    """a = relu(x); b = relu(a); c = relu(b); d = add(a, c): `a` stays alive until the add,
    so at the add a, c and d are alive (b was freed after c): 3 x 400 + x 400."""
    b = _builder()
    x = b.input("x", [100], "float32")
    a = b.relu(x)
    c = b.relu(b.relu(a))
    g = b.build({"d": b.add(a, c)})
    memory = estimate(g)
    # at relu(b): a, b, c alive = 1200 as well; at the add: a, c, d = 1200
    assert memory.peak_bytes == 400 + 1200
    assert estimate(g, keep_all=True).peak_bytes == 400 + 4 * 400


def test_constants_count_for_the_whole_run_and_name_the_largest() -> None:
    b = _builder()
    x = b.input("x", [4, 8], "float32")
    w = b.constant(np.ones((8, 1000), np.float32))
    g = b.build({"y": b.matmul(x, w)})
    memory = estimate(g)
    assert memory.resident_bytes == 4 * 8 * 4 + 8 * 1000 * 4
    assert memory.largest_bytes == 8 * 1000 * 4
    assert memory.largest == "a constant (float32 [8, 1000])"
    assert memory.peak_bytes == memory.resident_bytes + 4 * 1000 * 4


def test_check_names_the_tensor_budget_and_flag() -> None:
    b = _builder()
    y = b.expand(b.input("x", [3, 1], "float32"), [2**31 - 1, 3, 4], label="big")
    g = b.build({"y": y})
    with pytest.raises(BudgetExceeded) as info:
        check_run_memory(g, what="running m.onnx")
    exc = info.value
    assert (exc.budget, exc.flag) == ("max_tensor_bytes", "--max-tensor-bytes")
    assert exc.amount == (2**31 - 1) * 12 * 4 and exc.limit == DEFAULTS.max_tensor_bytes
    assert exc.message == (
        "running m.onnx: the output of expand 'big' (operation #1 of 1, graph output 'y'; "
        "float32 [2147483647, 3, 4]) would take 96.0 GiB (103,079,215,056 bytes), over the "
        "budget of 2 GiB for one tensor of a run")
    assert "\n" not in exc.render("cli") and "--max-tensor-bytes" in exc.render("cli")
    # the flag raises it: then the peak budget is next
    with pytest.raises(BudgetExceeded) as info:
        check_run_memory(g, Budgets(max_tensor_bytes="1TiB"))
    assert info.value.flag == "--max-run-bytes"
    assert ("the tensors alive at once at expand 'big', operation #1 of 1 (12 bytes of them "
            "inputs and constants) would take 96.0 GiB") in info.value.message
    check_run_memory(g, Budgets(max_tensor_bytes="1TiB", max_run_bytes="1TiB"))


def test_run_budget_under_the_limit_and_active_budgets() -> None:
    g = _chain()
    check_run_memory(g, Budgets(max_tensor_bytes=KiB, max_run_bytes=3 * KiB))
    with pytest.raises(BudgetExceeded, match=r"over the budget of 3\.0 KiB for one run"):
        check_run_memory(g, Budgets(max_run_bytes=3 * KiB - 1))
    with using(Budgets(max_tensor_bytes=KiB - 1)), pytest.raises(BudgetExceeded,
                                                                 match="input 'x'"):
        check_run_memory(g)


# -- the API: validate, ConversionResult.run, compile_graph -----------------------------------


def _expand_model(path: Path, rows: int) -> Path:
    """The fuzzer's reproducer (seed 20, onnx-00844): Expand of x[3, 1] to [rows, 3, 4]."""
    shape = numpy_helper.from_array(np.array([rows, 3, 4], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"])], "expand",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         str(path))
    return path


@pytest.fixture
def no_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replaces the reference framework's run and the backends with ones that record a
    call and fail."""
    import converter.validate.core as core

    calls: list[str] = []

    def refuse(name: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} ran")
        return run

    monkeypatch.setattr(core, "run_source", refuse("run_source"))
    monkeypatch.setattr(core, "run_graph", refuse("browser"))
    monkeypatch.setattr("converter.runtimes.get_backend", refuse("backend"))
    return calls


def test_validate_raises_before_anything_runs(tmp_path: Path, no_runs: list[str]) -> None:
    model = _expand_model(tmp_path / "expand.onnx", 2**31 - 1)
    with pytest.raises(BudgetExceeded) as info:
        validate(model)
    assert info.value.flag == "--max-tensor-bytes"
    assert "float32 [2147483647, 3, 4]) would take 96.0 GiB" in info.value.message
    assert no_runs == []
    small = _expand_model(tmp_path / "small.onnx", 1000)  # 47 KiB
    with pytest.raises(BudgetExceeded, match="over the budget of 16 KiB for one tensor"):
        validate(small, budgets=Budgets(max_tensor_bytes="16KiB"), browser=True)
    assert no_runs == []


def test_the_budget_raised_lets_validate_run(tmp_path: Path) -> None:
    small = _expand_model(tmp_path / "small.onnx", 1000)
    report = validate(small, budgets=Budgets(max_tensor_bytes="64KiB"))
    assert report.passed  # onnxruntime vs the reference backend


def test_divergence_search_over_the_run_budget_is_skipped(tmp_path: Path) -> None:
    """A failing output (a wrong stored value) starts the divergence search, which keeps
    every value: x (1 KiB) + three relu outputs = 4 KiB over a 3.5 KiB budget that the run
    itself (3 KiB at its peak) fits."""
    nodes = [helper.make_node("Relu", [a], [b], name=b)
             for a, b in (("x", "r0"), ("r0", "r1"), ("r1", "y"))]
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256])])
    model = tmp_path / "chain.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         str(model))
    assert [op.op for op in convert(model).graph.operations] == ["relu"] * 3
    wrong = {"y": np.full(256, -1.0, np.float32)}
    budgets = Budgets(max_run_bytes=3 * KiB + 512)
    report = validate(model, expected=wrong, budgets=budgets)
    assert not report.passed and report.divergence is None
    assert any(n.startswith("the first diverging node was not searched for: keeping every "
                            "intermediate value: ") and "(--max-run-bytes)" in n
               for n in report.notes), report.notes
    searched = validate(model, expected=wrong)
    assert not any("not searched" in n for n in searched.notes)


def test_result_run_and_compile_graph_check_the_active_budgets(tmp_path: Path) -> None:
    result = convert(_expand_model(tmp_path / "small.onnx", 1000))
    x = np.ones((3, 1), np.float32)
    with using(Budgets(max_tensor_bytes="16KiB")):
        with pytest.raises(BudgetExceeded, match="--max-tensor-bytes|max_tensor_bytes"):
            result.run({"x": x})
        with pytest.raises(BudgetExceeded):
            compile_graph(result.graph)
    y = result.run({"x": x})["y"]
    np.testing.assert_array_equal(y, np.broadcast_to(x, (1000, 3, 4)))  # numpy's broadcast
