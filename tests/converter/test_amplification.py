"""Amplification: small files that ask for much more work or memory than their size (issue
27 item 10). Each case is built here, run through the real CLI in a subprocess capped at
4 GiB of address space, and must end with exit 2 and one `error:` line naming the flag that
allows it; the work is bounded by counting (the sizing walk's visits) or by the child's peak
RSS (`os.wait4`), never by the wall clock.

- node counts: a file with more nodes than `--max-nodes` (refused right after parsing);
- nesting size: a tree of If nodes whose leaves call a local function (refused after about
  `--max-inlined-nodes` visits), and functions calling functions twice per level (2^40
  nodes from a few hundred bytes; refused in one linear walk);
- recursion: local functions calling themselves, directly or through another, in convert
  and inspect (one line naming the chain);
- derived bytes: a ConstantOfShape, a TFLite sparse tensor's dense shape and a TFLite
  variable tensor's shape asking for 1 GiB (under the 2 GiB one-constant budget) from a
  file of a few hundred bytes (`--max-derived-bytes`);
- manifests: an exported graph's manifest padded to megabytes for a tiny weights file is
  refused before it is parsed (`--max-manifest-bytes`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from converter.core.budgets import Budgets
from converter.core.errors import BudgetExceeded, InvalidModel
from converter.frontends.onnx.sizing import size_model
from tests.memory import PEAK_FILE_VAR, PEAK_HOOK, peak_kib
from tests.timing import HANG_GUARD_S

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 4 << 30
PEAK_RSS_KB = 500 * 1024
"""The child's peak resident memory allowed for a refused model (the interpreter with onnx,
numpy and the converter takes about 200 MB)."""
OPSET = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]

_RUN = PEAK_HOOK + """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""


def _cli(*args: object) -> tuple[int, str, int]:
    """Run the CLI in a capped child: (exit code, stderr, the child's own peak RSS in KiB,
    which it writes at exit: `tests.memory`)."""
    import tempfile
    import time

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    peak = tempfile.NamedTemporaryFile(delete=False)
    peak.close()
    env[PEAK_FILE_VAR] = peak.name
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", _RUN.format(cap=MEMORY_CAP),
                                 *(str(a) for a in args)], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + HANG_GUARD_S  # a hang guard only
        while True:
            pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"hung: {args}")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        try:
            return proc.returncode, err.read(), peak_kib(peak.name)
        finally:
            os.unlink(peak.name)


def _refused(code: int, err: str, flag: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert flag in lines[0], lines[0]
    return lines[0]


def _model(nodes: list[onnx.NodeProto], functions: list[onnx.FunctionProto] = (),  # type: ignore[assignment]
           inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
           inputs: list[onnx.ValueInfoProto] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])] if inputs is None
        else inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        list(inits))
    return helper.make_model(graph, opset_imports=OPSET, functions=list(functions),
                             ir_version=9)


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save_model(model, path)
    return path


# -- node counts -------------------------------------------------------------------------------


def _chain(n: int) -> onnx.ModelProto:
    """x -> Relu -> Relu -> ... (n nodes) -> y."""
    names = ["x", *(f"v{i}" for i in range(n - 1)), "y"]
    return _model([helper.make_node("Relu", [a], [b]) for a, b in zip(names, names[1:],
                                                                                 strict=False)])


def test_node_budget_refuses_a_large_file(tmp_path: Path) -> None:
    path = _save(_chain(3000), tmp_path / "chain.onnx")
    for command in ("convert", "validate"):
        extra = ["-o", tmp_path / "out"] if command == "convert" else []
        code, err, _ = _cli(command, path, *extra, "--max-nodes", "1000")
        line = _refused(code, err, "--max-nodes")
        assert "the main graph has 3,000 nodes, over the budget of 1,000 nodes" in line
    assert not (tmp_path / "out").exists()
    code, err, _ = _cli("convert", path, "-o", tmp_path / "out", "--max-nodes", "3000")
    assert code == 0, err


def test_default_node_budget_refuses_before_converting(tmp_path: Path) -> None:
    """260,000 nodes (6 MB) are over the default: refused after parsing, the child staying
    far below what converting them takes (3 GB for a million)."""
    model = _chain(2)
    node = model.graph.node[0]
    for _ in range(260_000 - 2):  # unconnected copies: the count is all that matters
        model.graph.node.add().CopyFrom(node)
    path = _save(model, tmp_path / "big.onnx")
    code, err, peak = _cli("convert", path, "-o", tmp_path / "out")
    _refused(code, err, "--max-nodes")
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"


# -- nesting size ------------------------------------------------------------------------------


def _leaf_function() -> onnx.FunctionProto:
    return helper.make_function("local", "Leaf", ["a"], ["b"],
                                [helper.make_node("Relu", ["a"], ["b"])], OPSET)


def _if_tree(depth: int) -> onnx.ModelProto:
    """A balanced tree of If nodes `depth` levels deep (2^depth leaves, each a call of the
    local function Leaf); the condition is a graph input, so both branches count."""
    def branch(level: int, out: str) -> onnx.GraphProto:
        if level == 0:
            node = helper.make_node("Leaf", ["x"], [out], domain="local")
        else:
            node = helper.make_node("If", ["c"], [out], then_branch=branch(level - 1, out),
                                    else_branch=branch(level - 1, out))
        return helper.make_graph([node], f"b{level}", [],
                                 [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1])])

    top = helper.make_node("If", ["c"], ["y"], name="root",
                           then_branch=branch(depth - 1, "t"), else_branch=branch(depth - 1, "e"))
    return _model([top], [_leaf_function()],
                  inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
                          helper.make_tensor_value_info("c", TensorProto.BOOL, [])])


def test_if_tree_is_refused_after_counting_about_the_budget() -> None:
    """2^12 leaves: refused under --max-inlined-nodes 1000 after about 1000 visits (each
    visited leaf asks once whether a handler takes Leaf: that is the counter)."""
    asked: list[str] = []

    def handled(op: str, domain: str, version: int) -> bool:
        asked.append(op)
        return False

    model = _if_tree(12)
    with pytest.raises(BudgetExceeded, match=r"^If 'root' .*would inline at least") as info:
        size_model(model, "tree.onnx", Budgets(max_inlined_nodes=1000), handled)
    assert info.value.flag == "--max-inlined-nodes"
    assert len(asked) < 1000  # far fewer than the 4,096 leaves
    assert size_model(model, "tree.onnx", Budgets(max_inlined_nodes=20_000), handled
                      ).inlined == 2 * 4096 - 2 + 4096  # Ifs and leaves + the Relu bodies


def test_if_tree_through_the_cli(tmp_path: Path) -> None:
    path = _save(_if_tree(10), tmp_path / "tree.onnx")
    code, err, _ = _cli("convert", path, "-o", tmp_path / "out", "--max-inlined-nodes", "500")
    line = _refused(code, err, "--max-inlined-nodes")
    assert "If 'root'" in line and "over the budget of 500 nodes" in line


def _doubling_functions(levels: int) -> onnx.ModelProto:
    """F0 = Relu; Fk calls F(k-1) twice: F`levels` inlines 2^levels nodes."""
    fns = [helper.make_function("local", "F0", ["a"], ["b"],
                                [helper.make_node("Relu", ["a"], ["b"])], OPSET)]
    for k in range(1, levels + 1):
        fns.append(helper.make_function("local", f"F{k}", ["a"], ["b"], [
            helper.make_node(f"F{k - 1}", ["a"], ["m"], domain="local"),
            helper.make_node(f"F{k - 1}", ["m"], ["b"], domain="local")], OPSET))
    return _model([helper.make_node(f"F{levels}", ["x"], ["y"], domain="local", name="top")],
                  fns)


def test_exponential_function_calls_are_counted_not_expanded(tmp_path: Path) -> None:
    model = _doubling_functions(40)
    assert model.ByteSize() < 8192
    with pytest.raises(BudgetExceeded, match=r"^local::F40 'top'") as info:
        size_model(model, "fns.onnx")
    assert info.value.budget in ("max_inlined_nodes", "max_nesting")
    # 12 levels (3 x 2^12 - 2 nodes inlined: calls and Relus) are within the budgets and
    # are counted exactly, visiting each of the 26 nodes of the file once
    size = size_model(_doubling_functions(12), "fns.onnx")
    assert (size.inlined, size.visited) == (3 * 2 ** 12 - 2, 26)
    path = _save(model, tmp_path / "fns.onnx")
    code, err, peak = _cli("convert", path, "-o", tmp_path / "out", "--max-nesting", "64")
    _refused(code, err, "--max-inlined-nodes")
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"


# -- recursion -------------------------------------------------------------------------------


def _recursive() -> onnx.ModelProto:
    """F calls G, G calls F (twice: inspect used to walk 2^64 calls)."""
    f = helper.make_function("local", "F", ["a"], ["b"],
                             [helper.make_node("G", ["a"], ["b"], domain="local")], OPSET)
    g = helper.make_function("local", "G", ["a"], ["b"], [
        helper.make_node("F", ["a"], ["m"], domain="local"),
        helper.make_node("F", ["m"], ["b"], domain="local")], OPSET)
    return _model([helper.make_node("F", ["x"], ["y"], domain="local", name="call")], [f, g])


def test_recursive_functions_are_refused_naming_the_chain(tmp_path: Path) -> None:
    path = _save(_recursive(), tmp_path / "rec.onnx")
    for command in ("convert", "inspect", "validate"):
        extra = ["-o", tmp_path / "out"] if command == "convert" else []
        code, err, _ = _cli(command, path, *extra)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert "model-local function 'local::F' calls itself (local::F -> local::G -> " \
               "local::F)" in lines[0], lines[0]
    with pytest.raises(InvalidModel, match="calls itself"):
        size_model(_recursive(), "rec.onnx")


# -- derived bytes -----------------------------------------------------------------------------


def test_constant_of_shape_under_the_constant_budget_is_refused_as_derived(tmp_path: Path
                                                                            ) -> None:
    """1 GiB of ones (under the 2 GiB one-constant budget) from a ~150-byte file."""
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    model = _model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="n", value=value)],
                   inits=[numpy_helper.from_array(np.array([16384, 16384], np.int64), "s")],
                   inputs=[])
    path = _save(model, tmp_path / "cos.onnx")
    assert path.stat().st_size < 512
    code, err, peak = _cli("convert", path, "-o", tmp_path / "out")
    line = _refused(code, err, "--max-derived-bytes")
    assert "ConstantOfShape 'n'" in line and "1 GiB" in line
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"
    # the flag lets a moderate one through: 4 MiB, over a lowered 1 MiB
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array([1024, 1024],
                                                                         np.int64), "s"))
    path = _save(model, tmp_path / "small.onnx")
    code, err, _ = _cli("convert", path, "-o", tmp_path / "o2", "--max-derived-bytes", "1MiB")
    _refused(code, err, "--max-derived-bytes")
    code, err, _ = _cli("convert", path, "-o", tmp_path / "o3", "--max-derived-bytes", "8MiB")
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
        code, err, peak = _cli(command, path, *extra)
        line = _refused(code, err, "--max-derived-bytes")
        assert "1 GiB" in line and ("'c'" in line or "'v'" in line), line
        assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"


# -- manifests ---------------------------------------------------------------------------------


def test_padded_manifest_is_refused_before_parsing(tmp_path: Path) -> None:
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])],
                   inits=[numpy_helper.from_array(np.arange(64, dtype=np.float32), "w")],
                   inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])])
    src = _save(model, tmp_path / "m.onnx")
    code, err, _ = _cli("convert", src, "-o", tmp_path / "g", "--format", "webnn")
    assert code == 0, err
    manifests = list((tmp_path / "g").glob("*manifest.json"))
    assert len(manifests) == 1
    doc: dict[str, Any] = json.loads(manifests[0].read_text())
    entry = next(iter(doc["tensors"].values()))
    for i in range(20_000):  # ~2.5 MB of entries for a weights file of a few bytes
        doc["tensors"][f"pad{i}"] = entry
    manifests[0].write_text(json.dumps(doc))
    np.savez(tmp_path / "in.npz", x=np.ones(64, np.float32))
    code, err, _ = _cli("run", tmp_path / "g", "--inputs", tmp_path / "in.npz")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "the manifest of a" in lines[0] and "max-manifest-bytes" in lines[0], lines[0]
    code, err, _ = _cli("run", tmp_path / "g", "--inputs", tmp_path / "in.npz",
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


# -- TFLite control flow: subgraph trees and recursion ------------------------------------------


def _tflite_if_tree(levels: int, recursive: bool = False) -> bytes:
    """Subgraph 1 adds x + x; subgraph k (2..levels) is an IF whose both branches are
    subgraph k - 1 (2^levels operators inlined from a few hundred bytes per level); the main
    subgraph is an IF of subgraph `levels` both ways. `recursive`: subgraph 1 is an IF of
    itself instead."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

    def if_op(mb: Any, x: int, y: int, index: int) -> None:
        c = mb.const("c", np.array(True))
        o = S.IfOptionsT()
        o.thenSubgraphIndex = o.elseSubgraphIndex = index
        mb.op("IF", [c, x], [y], o)

    mb = ModelBuilder()
    x = mb.input("x", [1])
    y = mb.output(mb.tensor("y", [1]))
    for k in range(1, levels + 1):
        mb.subgraph(f"s{k}")
        sx = mb.input("x", [1])
        sy = mb.output(mb.tensor("y", [1]))
        if k == 1 and not recursive:
            mb.op("ADD", [sx, sx], [sy], S.AddOptionsT())
        else:
            if_op(mb, sx, sy, k if k == 1 else k - 1)
    mb.use(0)
    if_op(mb, x, y, levels)
    return mb.build()


def test_tflite_subgraph_tree_is_counted_not_expanded(tmp_path: Path) -> None:
    path = tmp_path / "tree.tflite"
    path.write_bytes(_tflite_if_tree(12))
    code, err, _ = _cli("convert", path, "-o", tmp_path / "out", "--max-inlined-nodes", "1000")
    line = _refused(code, err, "--max-inlined-nodes")
    assert "IF" in line and "over the budget of 1,000 nodes" in line
    path.write_bytes(_tflite_if_tree(30))  # 2^30 operators: counted in one linear walk
    code, err, peak = _cli("convert", path, "-o", tmp_path / "out", "--max-nesting", "64")
    _refused(code, err, "--max-inlined-nodes")
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"
    path.write_bytes(_tflite_if_tree(3))  # 8 ADDs: converts
    code, err, _ = _cli("convert", path, "-o", tmp_path / "small")
    assert code == 0, err


def test_tflite_recursive_subgraph_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rec.tflite"
    path.write_bytes(_tflite_if_tree(1, recursive=True))
    code, err, _ = _cli("convert", path, "-o", tmp_path / "out")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "subgraph 1 inlines itself through control flow (subgraphs 1 -> 1)" in lines[0]


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
        model = _model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
                       inits=[numpy_helper.from_array(np.ones(n, np.int64), "s")])
        path = _save(model, tmp_path / "r.onnx")
    else:
        from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

        mb = ModelBuilder()
        x = mb.input("x", [1])
        s = mb.const("s", np.ones(n, np.int32))
        y = mb.output(mb.tensor("y", [1]))
        mb.op("RESHAPE", [x, s], [y], S.ReshapeOptionsT())
        path = tmp_path / "r.tflite"
        path.write_bytes(mb.build())
    code, err, _ = _cli("convert", path, "-o", tmp_path / "out")
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
    path = _save(_model([node], inits=inits, inputs=[]), tmp_path / "m.onnx")
    code, err, peak = _cli("validate", path)
    line = _refused(code, err, "--max-derived-bytes")
    assert f"{op} 'n'" in line and "256 MiB" in line and "derived from a model of" in line
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"
