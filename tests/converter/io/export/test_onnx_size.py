"""Size of the exported ONNX model (issue 13 point 6): every light_* zoo model exports at most
1.1x its source's size through the real CLI (`webnn-convert convert MODEL --format onnx`),
and the `_random` variants at most 1.1x their weight bytes plus a little; the names and
metadata that make this possible (`v<n>` values, unnamed nodes, no doc strings or value_info)
change nothing computed.

Oracles: the source file's size; the randomized source's initializer bytes; onnxruntime on
the original model (zoo tolerance, atol + rtol * max|ref|, on seeded normal inputs);
onnxruntime on the export with `readable_names=True` (bit-identical outputs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from cli.main import cli
from converter.core.budgets import SPECS
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from converter.zoo import ZooEntry, default_manifests, read_manifests
from converter.zoo.sources import load_model

ENTRIES = {e.name: e for e in read_manifests(default_manifests())
           if e.name.startswith("light_")}
LIGHT = sorted(n for n in ENTRIES if not n.endswith("_random"))
RANDOM = sorted(n for n in ENTRIES if n.endswith("_random"))
#: Bytes a `_random` export may add to 1.1x the weights: graph structure, shapes, names.
OVERHEAD = 64 * 1024


def _params(names: list[str], *, slow: bool | None = None) -> list[object]:
    """pytest params; marked slow when the zoo marks the entry slow (`slow=None`) or always
    (`slow=True`)."""
    return [pytest.param(n, id=n, marks=[pytest.mark.slow] if (
        ENTRIES[n].slow if slow is None else slow) else []) for n in names]


def _entry(name: str) -> ZooEntry:
    entry = ENTRIES[name]
    if entry.path is None:
        pytest.skip(entry.missing)
    return entry


def _source(entry: ZooEntry) -> Path:
    assert entry.path is not None
    return Path(entry.path)


def _cli_export(source: Path, entry: ZooEntry, out: Path) -> Path:
    """`webnn-convert convert SOURCE --format onnx -o OUT --target spec --shape ...` (the zoo's
    shapes; the unrestricted graph, as for onnxruntime); the written .onnx file."""
    shapes = [a for name, dims in entry.input_shapes.items()
              for a in ("--shape", f"{name}={','.join(str(d) for d in dims)}")]
    budgets = [a for field, value in entry.budgets.items()
               for a in (SPECS[field].flag, str(value))]
    r = CliRunner().invoke(cli, ["convert", str(source), "--format", "onnx", "-o", str(out),
                                 "--no-progress", "--target", "spec", *shapes, *budgets])
    assert r.exit_code == 0, r.output
    written = sorted(out.glob("*.onnx"))
    assert len(written) == 1 and not list(out.glob("*.onnx.data")), written
    return written[0]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """name -> the CLI export of that (non-random) light model, once per module."""
    cache: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in cache:
            entry = _entry(name)
            cache[name] = _cli_export(_source(entry), entry,
                                      tmp_path_factory.mktemp(name) / "out")
        return cache[name]

    return get


def _session(model: str | bytes) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _feeds(entry: ZooEntry) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(entry.seed)
    return {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in entry.input_shapes.items()}


# -- sizes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", _params(LIGHT, slow=False))
def test_light_model_exports_at_most_1_1x_its_source(
        name: str, exported: Callable[[str], Path]) -> None:
    source = _source(_entry(name)).stat().st_size
    size = exported(name).stat().st_size
    assert size <= 1.1 * source, (size, source, round(size / source, 3))


@pytest.mark.parametrize("name", _params(RANDOM, slow=True))
def test_random_weights_export_at_most_1_1x_the_weights(name: str, tmp_path: Path) -> None:
    entry = _entry(name)
    data = load_model(entry)
    assert isinstance(data, bytes)
    source = tmp_path / f"{name}.onnx"
    source.write_bytes(data)
    weights = sum(onnx.numpy_helper.to_array(t).nbytes
                  for t in onnx.load_from_string(data).graph.initializer)
    del data
    size = _cli_export(source, entry, tmp_path / "out").stat().st_size
    assert size <= 1.1 * weights + OVERHEAD, (size, weights)


# -- same results -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", _params(LIGHT))
def test_light_model_export_matches_the_source(name: str,
                                               exported: Callable[[str], Path]) -> None:
    entry = _entry(name)
    feeds = _feeds(entry)
    want = _session(str(entry.path)).run(None, feeds)
    got = _session(str(exported(name))).run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        w64 = w.astype(np.float64)
        err = float(np.max(np.abs(g.astype(np.float64) - w64)))
        assert err <= entry.atol + entry.rtol * float(np.max(np.abs(w64))), err


# -- names and metadata -----------------------------------------------------------------------
def _graph() -> MLGraph:
    """A small graph whose WebNN names look like generated ones, with a splat constant
    (written as ConstantOfShape) and a small one (an initializer)."""
    b = MLGraphBuilder(ML().create_context())
    x = b.input("v1", shape=[4, 100], data_type="float32")
    y = b.input("v2", shape=[4, 100], data_type="float32")
    w = b.constant(np.full((4, 100), 0.5, np.float32))
    s = b.relu(b.add(b.mul(x, w), b.sub(y, b.constant(np.arange(100, dtype=np.float32)))))
    return b.build({"v3": b.reshape(s, [100, 4]), "v5": b.sigmoid(s),
                    "v1 out": b.identity(x)})


def test_internal_names_are_short_and_nodes_unnamed() -> None:
    graph = _graph()
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    g = model.graph
    io = {"v1", "v2", "v3", "v5", "v1 out"}
    assert [i.name for i in g.input] == ["v1", "v2"]
    assert [o.name for o in g.output] == ["v3", "v5", "v1 out"]
    assert all(n.name == "" and not n.doc_string for n in g.node)
    internal = ({v for n in g.node for v in [*n.input, *n.output]}
                | {t.name for t in g.initializer}) - io
    assert internal and all(re.fullmatch(r"v\d+", v) for v in internal), internal
    assert not g.value_info and not g.doc_string and not model.doc_string
    assert "ConstantOfShape" in [n.op_type for n in g.node] and g.initializer
    assert all(not a.t.name for n in g.node for a in n.attribute)  # the attribute names it


def test_readable_names_compute_the_same() -> None:
    graph = _graph()
    short, readable = to_onnx(graph), to_onnx(graph, readable_names=True)
    assert all(n.name for n in readable.graph.node)
    assert any(not re.fullmatch(r"v\d+", n.output[0]) for n in readable.graph.node
               if n.output[0] not in {"v3", "v5", "v1 out"})
    assert len(short.SerializeToString()) < len(readable.SerializeToString())
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal((4, 100)).astype(np.float32) for n in ("v1", "v2")}
    for a, b in zip(_session(short.SerializeToString()).run(None, feeds),
                    _session(readable.SerializeToString()).run(None, feeds), strict=True):
        np.testing.assert_array_equal(a, b)
