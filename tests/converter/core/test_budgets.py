"""`converter.core.budgets`: the table of budgets, size parsing, `BudgetExceeded`, and every check
in the Python API: each hostile folding path of `tests/converter/hostile_models.py` in a
moderate size is rejected under a lowered budget (before the memory is allocated) and
converted under the raised one; totals, unrolled-node projection, nesting, recurrent steps,
TFLite sparse tensors and WHILE, exports; MemoryError becomes a budget error. (The hostile
sizes themselves run through the CLI under a 2 GiB address-space cap: tests/cli/
test_budgets.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.api import BudgetExceeded, Budgets, convert, export, validate
from converter.core.budgets import (
    BUDGETS,
    DEFAULTS,
    SPECS,
    active,
    format_bytes,
    markdown_table,
    parse_count,
    parse_size,
    using,
)
from converter.core.errors import ConversionError, InternalError, InvalidModel
from converter.core.webnn import ML, MLGraphBuilder
from converter.importer import ImportContext
from tests.converter import hostile_models as hm

GiB = 1 << 30


def _budgets(flags: list[str]) -> Budgets:
    """The Budgets a list of CLI flags (from hostile_models) sets."""
    values: dict[str, Any] = {}
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        (spec,) = [s for s in BUDGETS if s.flag == flag]
        values[spec.name] = value
    return Budgets(**values)


# -- the table -------------------------------------------------------------------------------


def test_defaults_and_table() -> None:
    assert DEFAULTS == Budgets() == active()
    assert DEFAULTS.to_dict() == {
        "max_constant_bytes": 2 * GiB, "max_total_constant_bytes": 16 * GiB,
        "max_unrolled_nodes": 65536, "max_trip_count": 4096, "max_recurrent_steps": 8192,
        "max_nodes": 250_000, "max_inlined_nodes": 65536, "max_derived_bytes": 64 << 20,
        "max_derived_ratio": 32, "max_manifest_bytes": 1 << 20,
        "max_nesting": 16, "max_export_bytes": 32 * GiB, "max_tensor_bytes": 2 * GiB,
        "max_run_bytes": 32 * GiB}
    assert [s.flag for s in BUDGETS] == [
        "--max-constant-bytes", "--max-total-constant-bytes", "--max-unrolled-nodes",
        "--max-trip-count", "--max-recurrent-steps", "--max-nodes", "--max-inlined-nodes",
        "--max-derived-bytes", "--max-derived-ratio", "--max-manifest-bytes", "--max-nesting",
        "--max-export-bytes", "--max-tensor-bytes", "--max-run-bytes"]
    table = markdown_table()
    assert all(f"`{s.flag}`" in table for s in BUDGETS)
    assert "| `max_constant_bytes` | `--max-constant-bytes` | 2 GiB |" in table


def test_docs_budget_table_is_current() -> None:
    """docs/security.md holds the generated budget table between its markers (rewrite it
    with `python -m tools.doc_tables --write`)."""
    from tools.doc_tables import BLOCKS, current

    block = next(b for b in BLOCKS if b.name == "budgets-table")
    assert block.path == "docs/security.md"
    assert current(block) == markdown_table()


@pytest.mark.parametrize(("text", "value"), [
    ("4096", 4096), (4096, 4096), ("2GiB", 2 * GiB), ("2 GiB", 2 * GiB), ("2G", 2 * GiB),
    ("500MB", 500_000_000), ("500mb", 500_000_000), ("1.5KiB", 1536), ("1_000", 1000),
    ("1TB", 10**12)])
def test_parse_size(text: object, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "0", "-1", "2XB", "GiB", "1e9", True, None, "2 G iB"])
def test_parse_size_rejects(text: object) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_parse_count() -> None:
    assert parse_count("64k") == 64000 and parse_count(12) == 12 and parse_count("1.5k") == 1500
    for bad in ("1.5", "0", "2KiB", "x"):
        with pytest.raises(ValueError):
            parse_count(bad)


def test_budgets_accept_strings_and_validate() -> None:
    b = Budgets(max_constant_bytes="4GiB", max_trip_count="10k")
    assert b.max_constant_bytes == 4 * GiB and b.max_trip_count == 10_000
    assert b.with_(max_nesting=3, max_trip_count=None).max_nesting == 3
    with pytest.raises(ValueError, match="--max-nesting"):
        Budgets(max_nesting=0)
    with pytest.raises(TypeError):
        with using("2GiB"):  # type: ignore[arg-type]
            pass


def test_format_bytes() -> None:
    assert format_bytes(512) == "512 bytes"
    assert format_bytes(2 * GiB) == "2 GiB"
    assert format_bytes(8_400_000_000) == "7.8 GiB"
    assert format_bytes(1536) == "1.5 KiB"


def test_error_renders_the_flag_or_the_keyword() -> None:
    with pytest.raises(BudgetExceeded) as info:
        DEFAULTS.check("max_trip_count", 5000, "the Loop would run")
    err = info.value
    assert isinstance(err, ConversionError) and not isinstance(err, InvalidModel)
    assert err.reason_code == "budget_exceeded"
    assert err.render("cli") == ("the Loop would run 5,000 iterations, over the budget of "
                                 "4,096 iterations for one loop (hint: raise it with "
                                 "--max-trip-count)")
    assert str(err).endswith("(hint: raise it with budgets=Budgets(max_trip_count=...))")
    data = err.to_dict("cli")
    assert (data["budget"], data["amount"], data["limit"]) == ("max_trip_count", 5000, 4096)


# -- every folding path, lowered and raised ---------------------------------------------------


ONNX_CASES = sorted(n for n in hm.MODERATE if n != "tflite_while")


@pytest.mark.parametrize("name", ONNX_CASES)
def test_lowered_budget_rejects_raised_budget_converts(name: str) -> None:
    amount, raised = hm.MODERATE[name]
    model = hm.HOSTILE[name][0](amount)
    budget = hm.HOSTILE[name][2]
    with pytest.raises(BudgetExceeded) as info:
        convert(model, budgets=_budgets(hm.LOWERED[name]))
    assert info.value.budget == budget
    assert SPECS[budget].flag in info.value.render("cli")
    result = convert(model, budgets=_budgets(raised))
    assert result.graph.outputs


def test_folded_values_are_checked_before_they_are_computed(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """ConstantOfShape asks before np.full; Expand before broadcasting."""
    calls: list[Any] = []
    real_full = np.full

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real_full(*args, **kwargs)

    monkeypatch.setattr(np, "full", spy)
    with pytest.raises(BudgetExceeded, match=r"ConstantOfShape 'n'.*7\.8 GiB"):
        convert(hm.constant_of_shape(100_000))
    assert [100_000, 21000] not in calls


def test_replayed_fold_checks_every_operation() -> None:
    """MatMul of two small constants is folded on the reference backend: its 4 MiB output is
    checked from the scratch graph's descriptors before anything runs."""
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")]
    model = hm._model(nodes, [hm._floats("a", np.ones((1024, 1))),
                              hm._floats("b", np.ones((1, 1024)))])
    with pytest.raises(BudgetExceeded, match=r"MatMul 'mm'.*the folded value \(matmul\) "
                                             r"would take 4 MiB"):
        convert(model, budgets=Budgets(max_constant_bytes="1MiB"))
    convert(model, budgets=Budgets(max_constant_bytes="4MiB"))


def test_total_constant_budget() -> None:
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    nodes = [helper.make_node("ConstantOfShape", ["s"], [f"c{i}"], name=f"c{i}", value=value)
             for i in range(3)]
    nodes.append(helper.make_node("Sum", ["c0", "c1", "c2"], ["y"], name="sum"))
    model = hm._model(nodes, [hm._ints("s", [1000, 100])])  # 400 kB each
    with pytest.raises(BudgetExceeded, match="ConstantOfShape 'c2'.*constants of this "
                                             "conversion") as info:
        convert(model, budgets=Budgets(max_total_constant_bytes=1_000_000))
    assert info.value.budget == "max_total_constant_bytes"
    convert(model, budgets=Budgets(max_total_constant_bytes=2_000_000))


def test_sparse_initializer_checked_before_densifying() -> None:
    with pytest.raises(BudgetExceeded, match="the sparse tensor 'w' would densify to 7.8 GiB"):
        convert(hm.sparse_initializer(100_000))


# -- loops, nesting, recurrent ops ------------------------------------------------------------


def test_loop_trip_count_checked_before_unrolling() -> None:
    with pytest.raises(BudgetExceeded, match="the Loop would run 1,000,000,000 iterations"):
        convert(hm.loop(10**9))


def test_nested_loops_projected_after_one_iteration() -> None:
    with pytest.raises(BudgetExceeded, match=r"Loop 'outer'.*nodes per iteration, the "
                                             r"4,095 iteration\(s\) left") as info:
        convert(hm.nested_loops(4096))
    assert info.value.budget == "max_unrolled_nodes"


def test_unrolled_nodes_counted_across_loops() -> None:
    """Two sibling loops of 30 iterations x 2 nodes: 120 unrolled nodes in all."""
    body = hm._counter_body([])
    nodes = [helper.make_node("Loop", ["M", "", "z"], ["a"], name="l1", body=body),
             helper.make_node("Loop", ["M", "", "a"], ["y"], name="l2", body=body)]
    model = hm._model(nodes, [hm._ints("M", 30), hm._floats("z", [0.0])])
    with pytest.raises(BudgetExceeded, match="Loop 'l2'"):
        convert(model, budgets=Budgets(max_unrolled_nodes=100))
    convert(model, budgets=Budgets(max_unrolled_nodes=120))


def test_while_loop_idiom_counts_only_the_iterations_run() -> None:
    """A condition input with M = INT64_MAX (the exporters' while loop) that stops after 3
    iterations converts; without the condition the trip count is refused in advance."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "one"], ["acc2"]),
         helper.make_node("Less", ["i", "two"], ["cout"])], "body",
        [hm._vi("i", [], TensorProto.INT64), hm._vi("cin", [], TensorProto.BOOL),
         hm._vi("acc", [1])], [hm._vi("cout", [], TensorProto.BOOL), hm._vi("acc2", [1])],
        [hm._floats("one", [1.0]), hm._ints("two", 2)])
    node = helper.make_node("Loop", ["M", "c", "z"], ["y"], name="loop", body=body)
    model = hm._model([node], [hm._ints("M", 2**63 - 1), hm._floats("z", [0.0]),
                               numpy_helper.from_array(np.array(True), "c")])
    assert convert(model).run({})["y"].tolist() == [3.0]


def test_scan_length_budget() -> None:
    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]),
                              helper.make_node("Identity", ["s2"], ["o"])], "body",
                             [hm._vi("s", [1]), hm._vi("x", [1])],
                             [hm._vi("s2", [1]), hm._vi("o", [1])])
    node = helper.make_node("Scan", ["s0", "xs"], ["y", "ys"], num_scan_inputs=1, body=body,
                            name="scan")
    model = hm._model([node], [hm._floats("s0", [0.0])],
                      inputs=[hm._vi("xs", [5000, 1])], outputs=("y", "ys"))
    with pytest.raises(BudgetExceeded, match="the Scan would run 5,000 iterations"):
        convert(model)


def test_nesting_budget_names_the_top_node() -> None:
    with pytest.raises(BudgetExceeded, match=r"^If 'if' \(opset 17\): .*would nest 17 "
                                             "levels") as info:
        convert(hm.nested_ifs(24))
    assert info.value.node_name == "if" and info.value.budget == "max_nesting"
    convert(hm.nested_ifs(18), budgets=Budgets(max_nesting=18))


def test_recurrent_steps_budget() -> None:
    with pytest.raises(BudgetExceeded, match="65,536 time steps"):
        convert(hm.gru(65_536))


def test_tflite_while_budget() -> None:
    with pytest.raises(BudgetExceeded, match=r"WHILE 'i_out' \(version 1\).*at least 4,097"):
        convert(hm.tflite_while(10**9))
    with pytest.raises(BudgetExceeded, match="at least 21 iterations"):
        convert(hm.tflite_while(50), budgets=Budgets(max_trip_count=20))
    convert(hm.tflite_while(50), budgets=Budgets(max_trip_count=50))


def test_tflite_sparse_tensor_checked_before_densifying() -> None:
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

    def dim(fmt: int, dense: int = 0, seg: Any = None, idx: Any = None) -> Any:
        d = S.DimensionMetadataT()
        d.format, d.denseSize = fmt, dense
        if seg is not None:
            for attr, values in (("arraySegments", seg), ("arrayIndices", idx)):
                vec = S.Int32VectorT()
                vec.values = list(values)
                setattr(d, attr + "Type", S.SparseIndexVector.Int32Vector)
                setattr(d, attr, vec)
        return d

    def model(rows: int) -> bytes:
        sp = S.SparsityParametersT()
        sp.traversalOrder, sp.blockMap = [0, 1], []
        sp.dimMetadata = [dim(0, 1), dim(1, seg=[0, 1], idx=[0])]
        mb = ModelBuilder()
        x = mb.input("x", [1])
        c = mb.tensor("c", [rows, 21000], data=np.ones(1, np.float32), sparsity=sp)
        d = mb.tensor("d", [rows, 21000])
        y = mb.output(mb.tensor("y", [1]))
        mb.op("DENSIFY", [c], [d])
        mb.op("ADD", [x, x], [y], S.AddOptionsT())
        return mb.build()

    with pytest.raises(BudgetExceeded, match="the sparse tensor 'c' would densify to 7.8 GiB"):
        convert(model(100_000))
    with pytest.raises(BudgetExceeded, match="--max-constant-bytes|max_constant_bytes"):
        converter.inspect_model(model(100_000))


# -- memory errors, exports, the import context ----------------------------------------------


def test_memory_error_becomes_a_budget_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from op_mappings.onnx import tile as tile_module

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(tile_module.np, "tile", boom)
    with pytest.raises(BudgetExceeded) as info:
        convert(hm.tile(10))
    err = info.value
    assert not isinstance(err, InternalError)
    assert err.node_name == "n" and "ran out of memory" in err.message
    assert "--max-constant-bytes" in err.render("cli")


def test_tflite_memory_error_is_not_an_invalid_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from converter.frontends.tflite import reader

    def boom(self: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(reader._Reader, "read", boom)
    with pytest.raises(BudgetExceeded, match="ran out of memory"):
        convert(hm.tflite_while(3))


def test_export_budget(tmp_path: Path) -> None:
    from converter.io.export.exporter import export_size

    result = convert(hm.constant_of_shape(100))  # 8.4 MB folded into one graph constant
    weights = 100 * 21000 * 4
    assert export_size(result.graph, "webnn") >= weights
    assert export_size(result.graph, "all") >= 2 * weights
    assert export_size(result.graph, "all", "safetensors") >= 3 * weights
    with pytest.raises(BudgetExceeded, match="the all export would write about 1[67]"):
        export(result, tmp_path / "o", format="all", budgets=Budgets(max_export_bytes="10MB"))
    assert not (tmp_path / "o").exists()
    export(result, tmp_path / "o", format="webnn", budgets=Budgets(max_export_bytes="10MB"))


def test_validate_takes_budgets(tmp_path: Path) -> None:
    model = hm.save("loop", 50, tmp_path)
    with pytest.raises(BudgetExceeded, match="max_trip_count"):
        validate(model, budgets=Budgets(max_trip_count=49))
    assert validate(model, budgets=Budgets(max_trip_count=50)).passed


def test_import_context_budgets() -> None:
    ctx = ImportContext(MLGraphBuilder(ML().create_context()), {}, {})
    assert ctx.budgets == active()
    ctx.check_constant([1000, 1000], "float32")
    with pytest.raises(BudgetExceeded, match="over the budget of 2 GiB"):
        ctx.check_constant([100_000, 100_000], np.float32)
    with using(Budgets(max_constant_bytes=100)):
        small = ImportContext(MLGraphBuilder(ML().create_context()), {}, {})
    assert small.budgets.max_constant_bytes == 100
    with pytest.raises(BudgetExceeded):
        small.constant(np.zeros(100, np.float32))
