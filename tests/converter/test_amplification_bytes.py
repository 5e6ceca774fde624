"""Amplification: small files that ask for much more work or memory than their size (issue
27 item 10). Each case is built here, run through the real CLI in a subprocess capped at
4 GiB of address space (`tests.converter.capped_cli`), and must end with exit 2 and one
`error:` line naming the flag that allows it; the work is bounded by counting (the sizing
walk's visits) or by the child's peak RSS (`os.wait4`), never by the wall clock.

This module: bytes a file asks for.

- derived bytes: a ConstantOfShape, a TFLite sparse tensor's dense shape and a TFLite
  variable tensor's shape asking for 1 GiB (under the 2 GiB one-constant budget) from a
  file of a few hundred bytes (`--max-derived-bytes`);
- manifests: an exported graph's manifest padded to megabytes for a tiny weights file is
  refused before it is parsed (`--max-manifest-bytes`);
- running: MLContext.compute / dispatch check the run budgets;
- the onnxruntime decoder oracle survives a native crash while its session is created;
- huge shape vectors and folded constants found by the fixed-seed campaign.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from converter.core.budgets import Budgets
from converter.core.errors import BudgetExceeded
from tests.converter.capped_cli import (
    PEAK_RSS_KB,
    capped_cli,
    one_graph_model,
    refused,
    save,
)

# -- derived bytes -----------------------------------------------------------------------------


def test_constant_of_shape_under_the_constant_budget_is_refused_as_derived(tmp_path: Path
                                                                            ) -> None:
    """1 GiB of ones (under the 2 GiB one-constant budget) from a ~150-byte file."""
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    model = one_graph_model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="n", value=value)],
                   inits=[numpy_helper.from_array(np.array([16384, 16384], np.int64), "s")],
                   inputs=[])
    path = save(model, tmp_path / "cos.onnx")
    assert path.stat().st_size < 512
    code, err, peak = capped_cli("convert", path, "-o", tmp_path / "out")
    line = refused(code, err, "--max-derived-bytes")
    assert "ConstantOfShape 'n'" in line and "1 GiB" in line
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"
    # the flag lets a moderate one through: 4 MiB, over a lowered 1 MiB
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array([1024, 1024],
                                                                         np.int64), "s"))
    path = save(model, tmp_path / "small.onnx")
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "o2", "--max-derived-bytes", "1MiB")
    refused(code, err, "--max-derived-bytes")
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "o3", "--max-derived-bytes", "8MiB")
    assert code == 0, err


def _tflite(kind: str, rows: int) -> bytes:
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

    mb = ModelBuilder()
    x = mb.input("x", [1])
    if kind == "sparse":
        sp = S.SparsityParametersT()
        sp.traversalOrder, sp.blockMap = [0, 1], []
        d0, d1 = S.DimensionMetadataT(), S.DimensionMetadataT()
        d0.format, d0.denseSize = 0, 1
        d1.format = 1
        for attr, values in (("arraySegments", [0, 1]), ("arrayIndices", [0])):
            vec = S.Int32VectorT()
            vec.values = values
            setattr(d1, attr + "Type", S.SparseIndexVector.Int32Vector)
            setattr(d1, attr, vec)
        sp.dimMetadata = [d0, d1]
        c = mb.tensor("c", [rows, 16384], data=np.ones(1, np.float32), sparsity=sp)
        d = mb.tensor("d", [rows, 16384])
        mb.op("DENSIFY", [c], [d])
    else:
        v = mb.tensor("v", [rows, 16384])
        mb.model.subgraphs[-1].tensors[v].isVariable = True
        h = mb.tensor("h", [], "resource")
        o = S.VarHandleOptionsT()
        o.sharedName = "v"
        mb.op("VAR_HANDLE", [], [h], o)
        r = mb.tensor("r", [rows, 16384])
        mb.op("READ_VARIABLE", [h], [r])
    y = mb.output(mb.tensor("y", [1]))
    mb.op("ADD", [x, x], [y], S.AddOptionsT())
    return mb.build()


@pytest.mark.parametrize("kind", ["sparse", "variable"])
def test_tflite_shapes_asking_for_a_gigabyte_are_refused(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"{kind}.tflite"
    path.write_bytes(_tflite(kind, 16384))
    assert path.stat().st_size < 2048
    for command in ("convert", "inspect"):
        extra = ["-o", tmp_path / "out"] if command == "convert" else []
        code, err, peak = capped_cli(command, path, *extra)
        line = refused(code, err, "--max-derived-bytes")
        assert "1 GiB" in line and ("'c'" in line or "'v'" in line), line
        assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"


# -- manifests ---------------------------------------------------------------------------------


def test_padded_manifest_is_refused_before_parsing(tmp_path: Path) -> None:
    model = one_graph_model([helper.make_node("Add", ["x", "w"], ["y"])],
                   inits=[numpy_helper.from_array(np.arange(64, dtype=np.float32), "w")],
                   inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])])
    src = save(model, tmp_path / "m.onnx")
    code, err, _ = capped_cli("convert", src, "-o", tmp_path / "g", "--format", "webnn")
    assert code == 0, err
    manifests = list((tmp_path / "g").glob("*manifest.json"))
    assert len(manifests) == 1
    doc: dict[str, Any] = json.loads(manifests[0].read_text())
    entry = next(iter(doc["tensors"].values()))
    for i in range(20_000):  # ~2.5 MB of entries for a weights file of a few bytes
        doc["tensors"][f"pad{i}"] = entry
    manifests[0].write_text(json.dumps(doc))
    np.savez(tmp_path / "in.npz", x=np.ones(64, np.float32))
    code, err, _ = capped_cli("run", tmp_path / "g", "--inputs", tmp_path / "in.npz")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "the manifest of a" in lines[0] and "max-manifest-bytes" in lines[0], lines[0]
    code, err, _ = capped_cli("run", tmp_path / "g", "--inputs", tmp_path / "in.npz",
                        "--max-manifest-bytes", "8MiB")
    assert code == 0, err


# -- running: MLContext.compute / dispatch check the run budgets (issue 27 item 13) -----------


def test_compute_and_dispatch_check_the_run_budgets() -> None:
    from converter.core.budgets import using
    from converter.core.webnn import ML, MLGraphBuilder

    ctx = ML().create_context()
    builder = MLGraphBuilder(ctx)
    x = builder.input("x", [1], "float32")
    graph = builder.build({"y": builder.expand(x, [1024, 1024])})  # 4 MiB output
    feeds = {"x": np.ones(1, np.float32)}
    with using(Budgets(max_tensor_bytes="1MiB")):
        with pytest.raises(BudgetExceeded, match=r"^compute: the output of expand .*4 MiB.*"
                                                 r"over the budget of 1 MiB"):
            ctx.compute(graph, feeds)
        inp = ctx.create_tensor([1], "float32", writable=True)
        ctx.write_tensor(inp, feeds["x"])
        out = ctx.create_tensor([1024, 1024], "float32", readable=True)
        with pytest.raises(BudgetExceeded, match="^dispatch: .*max_tensor_bytes"):
            ctx.dispatch(graph, {"x": inp}, {"y": out})
    with using(Budgets(max_run_bytes="2MiB")):
        with pytest.raises(BudgetExceeded, match="over the budget of 2 MiB for one run"):
            ctx.compute(graph, feeds)
    assert ctx.compute(graph, feeds)["y"].shape == (1024, 1024)  # the defaults allow it


# -- the onnxruntime decoder oracle creates its session in a forked child first ---------------


def test_decoder_oracle_survives_a_crash_while_the_session_is_created(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime crashing natively while it loads a decoder (here: SIGSEGV from the session
    constructor) is one `NativeCrash` naming the model; this process goes on."""
    import signal

    import onnxruntime as ort

    from converter.core.isolate import NativeCrash, can_isolate
    from converter.validate.generate import OnnxRuntimeDecoder
    from tests.converter.validate.test_generate import _concat_decoder

    if not can_isolate():
        pytest.skip("no os.fork")
    model = _concat_decoder(tmp_path / "decoder.onnx")

    def crash(*args: Any, **kwargs: Any) -> Any:
        import faulthandler

        faulthandler.disable()
        os.kill(os.getpid(), signal.SIGSEGV)

    monkeypatch.setattr(ort, "InferenceSession", crash)
    with pytest.raises(NativeCrash, match=r"onnxruntime crashed running .*decoder\.onnx "
                                          r"\(SIGSEGV\)"):
        OnnxRuntimeDecoder(model)
    monkeypatch.undo()
    assert OnnxRuntimeDecoder(model).generate([3, 5], 2).tokens


# -- found by the fixed-seed campaign (seed 40) ------------------------------------------------


@pytest.mark.parametrize("fmt", ["onnx", "tflite"])
def test_a_huge_shape_vector_is_refused_before_becoming_a_list(fmt: str, tmp_path: Path
                                                               ) -> None:
    """Seed 40: a TFLite variable tensor of [8192, 8192] int32 (zeros, within the derived
    budget) read as a SLICE size / RESHAPE shape became a Python list of 67 million ints
    (gigabytes, over 20 s, and an error message quoting all of them). A list of sizes, axes
    or indices has at most 65,536 values: the node is refused naming the input."""
    n = 70_000
    if fmt == "onnx":
        model = one_graph_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
                       inits=[numpy_helper.from_array(np.ones(n, np.int64), "s")])
        path = save(model, tmp_path / "r.onnx")
    else:
        from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

        mb = ModelBuilder()
        x = mb.input("x", [1])
        s = mb.const("s", np.ones(n, np.int32))
        y = mb.output(mb.tensor("y", [1]))
        mb.op("RESHAPE", [x, s], [y], S.ReshapeOptionsT())
        path = tmp_path / "r.tflite"
        path.write_bytes(mb.build())
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "out")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "has 70,000 values; a list of sizes, axes or indices has at most 65,536" in lines[0]
    assert len(lines[0]) < 1000


@pytest.mark.parametrize("op", ["Range", "Tile"])
def test_validate_of_a_folded_quarter_gigabyte_is_refused(op: str, tmp_path: Path) -> None:
    """Seed 40: `validate` of a 300-byte model folding a Range / Tile to 256 MiB (within the
    first default of 256 MiB derived) ran out of a 4 GiB address space comparing the outputs
    (float64 copies and differences). 64 MiB + 32 x the model's size refuses it before."""
    if op == "Range":
        inits = [numpy_helper.from_array(np.array(v, np.float32), k)
                 for k, v in (("a", 0.0), ("b", float(8192 * 8192)), ("d", 1.0))]
        node = helper.make_node("Range", ["a", "b", "d"], ["y"], name="n")
    else:
        inits = [numpy_helper.from_array(np.ones([1, 1], np.float32), "one"),
                 numpy_helper.from_array(np.array([8192, 8192], np.int64), "s")]
        node = helper.make_node("Tile", ["one", "s"], ["y"], name="n")
    path = save(one_graph_model([node], inits=inits, inputs=[]), tmp_path / "m.onnx")
    code, err, peak = capped_cli("validate", path)
    line = refused(code, err, "--max-derived-bytes")
    assert f"{op} 'n'" in line and "256 MiB" in line and "derived from a model of" in line
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"
