"""converter.zoo: manifest layouts and resolution, the parallel runner, and the reports
(JSON round trip, Markdown, self-contained and escaped HTML)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converter.core.errors import InvalidModel
from converter.zoo import (
    ZooReport,
    ZooResult,
    read_manifest,
    read_manifests,
    render_html,
    render_markdown,
    run_entry,
    run_zoo,
    write_reports,
)
from tests.cli.models import tiny_cnn, tiny_tflite, unsupported_onnx


def test_manifest_layouts(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(b"x")
    (tmp_path / "in.npz").write_bytes(b"x")
    path = tmp_path / "zoo.toml"
    path.write_text("""
[[model]]
name = "a"
path = "m.onnx"
free_dims = { batch = 2 }
tolerance = 1e-4
licence = "MIT"
inputs = "in.npz"

[models.b]
file = "m.onnx"
input_shapes = { x = [1, 3] }
tolerance = { rtol = 1e-2, atol = 1e-5 }
slow = true

[c]
path = "elsewhere.onnx"

[d]
url = "https://example.com/model.onnx"

[[model]]
name = "light"
package = "onnx"
path = "backend/test/data/light/light_resnet50.onnx"
rtol = 5e-3
""")
    entries = {e.name: e for e in read_manifest(path)}
    assert set(entries) == {"a", "b", "c", "d", "light"}
    a = entries["a"]
    assert a.path == str(tmp_path / "m.onnx") and dict(a.free_dims) == {"batch": 2}
    assert (a.rtol, a.atol, a.licence) == (1e-4, 1e-4, "MIT")
    assert a.inputs == str(tmp_path / "in.npz")
    b = entries["b"]
    assert (b.rtol, b.atol, b.slow) == (1e-2, 1e-5, True)
    assert dict(b.input_shapes) == {"x": [1, 3]}
    assert entries["c"].path is None and "not found" in entries["c"].missing
    assert entries["d"].path is None and "not downloaded" in entries["d"].missing
    light = entries["light"]
    assert light.path is not None and light.path.endswith("light_resnet50.onnx")
    assert light.rtol == 5e-3
    # several manifests: first entry of a name wins
    other = tmp_path / "other.toml"
    other.write_text('[[model]]\nname = "a"\npath = "x.onnx"\n[[model]]\nname = "e"\n'
                     'path = "m.onnx"\n')
    names = [e.name for e in read_manifests([path, other])]
    assert names == ["a", "light", "b", "c", "d", "e"]


def test_manifest_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[[model]\n")
    with pytest.raises(InvalidModel, match="not valid TOML"):
        read_manifest(bad)
    with pytest.raises(InvalidModel, match="does not exist"):
        read_manifest(tmp_path / "none.toml")
    noname = tmp_path / "noname.toml"
    noname.write_text('[[model]]\npath = "m.onnx"\n')
    with pytest.raises(InvalidModel, match="no name"):
        read_manifest(noname)
    badval = tmp_path / "badval.toml"
    badval.write_text('[[model]]\nname = "x"\npath = "m.onnx"\nfree_dims = { batch = "a" }\n')
    with pytest.raises(InvalidModel, match="entry 'x'"):
        read_manifest(badval)
    badval.write_text('[[model]]\nname = "y"\npath = "m.onnx"\ntolerance = "loose"\n')
    with pytest.raises(InvalidModel, match="entry 'y'"):
        read_manifest(badval)


def test_run_zoo_parallel(tmp_path: Path) -> None:
    tiny_cnn(tmp_path / "cnn.onnx")
    tiny_tflite(tmp_path / "t.tflite")
    unsupported_onnx(tmp_path / "u.onnx")
    manifest = tmp_path / "zoo.toml"
    manifest.write_text("""
[[model]]
name = "cnn"
path = "cnn.onnx"
free_dims = { batch = 1 }
[[model]]
name = "tfl"
path = "t.tflite"
[[model]]
name = "bad"
path = "u.onnx"
[[model]]
name = "gone"
path = "gone.onnx"
""")
    done: list[str] = []
    report = run_zoo(read_manifest(manifest), jobs=2, on_done=done.append)
    assert sorted(done) == ["bad", "cnn", "gone", "tfl"]
    assert [r.name for r in report.results] == ["cnn", "tfl", "bad", "gone"]
    status = {r.name: r for r in report.results}
    # the tiny CNN under the default target: 9 operations and its input transposed to NHWC
    assert status["cnn"].status == "pass" and status["cnn"].operations == 10
    assert status["cnn"].max_abs is not None and status["cnn"].max_abs < 1e-5
    assert status["tfl"].status == "pass" and status["tfl"].format == "tflite"
    assert status["bad"].status == "error" and status["bad"].reason_code == "conversion_failed"
    assert "Frobnicate" in status["bad"].message
    assert status["gone"].status == "skipped"
    assert not report.passed
    assert report.counts() == {"pass": 2, "fail": 0, "error": 1, "skipped": 1}
    assert "4 models: 2 pass, 0 fail, 1 error, 1 skipped" in report.to_text()


def _report() -> ZooReport:
    hostile = '<img src=x onerror="alert(1)">|`'
    results = (
        ZooResult("ok", "pass", format="onnx", max_abs=1e-6, max_rel=1e-6, rtol=1e-3,
                  atol=1e-3, outputs=({"name": "y", "tolerance": 2e-3, "max_abs": 1e-6},),
                  timings={"convert": 0.5, "total": 1.0}, operations=12, licence="MIT"),
        ZooResult(hostile, "fail", format="tflite", max_abs=float("inf"), max_rel=float("inf"),
                  outputs=({"name": hostile, "tolerance": 1e-3},),
                  divergence={"node": hostile, "op_type": "</script><script>alert(2)",
                              "output": "o", "max_abs": 3.0},
                  timings={"total": 2.0}),
        ZooResult("broken", "error", message=f"1 node(s) failed: {hostile}\nsecond line",
                  reason_code="conversion_failed"),
    )
    return ZooReport(results, "reference", "cpu", 2, "2026-01-01T00:00:00+00:00", 3.0)


def test_reports_escape_and_round_trip(tmp_path: Path) -> None:
    report = _report()
    paths = write_reports(report, tmp_path / "rep")
    assert [p.name for p in paths] == ["report.json", "report.md", "report.html"]
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert data["summary"] == {"total": 3, "pass": 1, "fail": 1, "error": 1, "skipped": 0}
    assert data["models"][1]["max_abs"] == "inf"  # JSON-safe
    page = render_html(report)
    assert "<img" not in page and "onerror=\"alert" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "</script><script>alert(2)" not in page
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert "http" not in page.replace("http-equiv", "")  # nothing fetched from outside
    md = render_markdown(report)
    row = next(line for line in md.splitlines() if "onerror" in line)
    assert row.count(" | ") == 9  # pipes in names are escaped, the table keeps its columns
    assert "second line" not in md
    assert "<img" not in md


def test_manifest_source_table_and_input_specs(tmp_path: Path) -> None:
    """The layout of converter/zoo/models/zoo_tflite.toml: source = {pypi, path} resolved through the
    distribution's metadata; inputs = {name: {shape, dtype, range}} drive the inputs."""
    from converter import convert
    from converter.zoo.sources import spec_inputs

    tiny_tflite(tmp_path / "t.tflite")
    path = tmp_path / "zoo.toml"
    path.write_text("""
[[model]]
name = "light"
source = { pypi = "onnx", path = "onnx/backend/test/data/light/light_resnet50.onnx" }
tolerance = { y = { atol = 1e-4, rtol = 1e-3 }, z = { atol = 1e-5, rtol = 1e-2 } }

[[model]]
name = "tfl"
path = "t.tflite"
inputs = { x = { shape = [1, 8, 8, 3], dtype = "float32", range = [2.0, 3.0] } }
""")
    light, tfl = read_manifest(path)
    assert light.path is not None and light.path.endswith("light_resnet50.onnx")
    assert "pypi=onnx" in light.source
    assert (light.rtol, light.atol) == (1e-2, 1e-4)  # the loosest of the per-output values
    assert dict(tfl.input_specs["x"]) == {"shape": [1, 8, 8, 3], "dtype": "float32",
                                          "range": [2.0, 3.0]}
    x = spec_inputs(tfl, convert(tfl.path))["x"]
    assert x.shape == (1, 8, 8, 3) and 2.0 <= x.min() and x.max() <= 3.0
    result = run_entry(tfl)
    assert result.status == "pass", result.message


def test_manifest_light_model_fields(tmp_path: Path) -> None:
    """The layout of converter/zoo/models/zoo.toml: string sources ("onnx-package:", "pypi:"), pins with a
    dtype, tolerance {atol, rtol_max}, input recipes, random weights, stored outputs."""
    import numpy as np
    import onnx

    from converter import convert
    from converter.zoo.sources import (
        entry_inputs,
        load_model,
        randomize_constant_of_shape,
        stored_outputs,
    )

    path = tmp_path / "zoo.toml"
    path.write_text("""
[[model]]
name = "sq"
source = "onnx-package:backend/test/data/light/light_squeezenet.onnx"
licence = "Apache-2.0"
inputs = "onnx-dummy"
reference_output = "light_squeezenet_output_0.pb"
tolerance = { atol = 1e-4, rtol_max = 2e-3 }

[[model]]
name = "sq_random"
source = "pypi:onnx:onnx/backend/test/data/light/light_squeezenet.onnx"
inputs = "normal"
input_scale = 0.5
weights = "random"
seed = 3
pins = { sr = { value = 16000, dtype = "int64" }, k = 2 }
sha256 = "0000"
""")
    sq, rnd = read_manifest(path)
    assert sq.path is not None and sq.path.endswith("light_squeezenet.onnx")
    assert rnd.path is not None and Path(rnd.path).samefile(sq.path)
    assert (sq.rtol, sq.atol) == (2e-3, 1e-4)
    assert sq.input_recipe == "onnx-dummy" and sq.inputs is None and sq.weights == "as-is"
    assert sq.reference_output == str(Path(sq.path).with_name("light_squeezenet_output_0.pb"))
    assert (rnd.input_recipe, rnd.input_scale, rnd.weights, rnd.seed) == ("normal", 0.5,
                                                                         "random", 3)
    assert rnd.pin_inputs["sr"].dtype == np.int64 and int(rnd.pin_inputs["sr"]) == 16000
    assert rnd.pin_inputs["k"] == 2 and rnd.sha256 == "0000"

    assert load_model(sq) == sq.path
    model = onnx.load_from_string(load_model(rnd))
    assert "ConstantOfShape" not in {n.op_type for n in model.graph.node}
    again = randomize_constant_of_shape(onnx.load(sq.path), 3)
    assert model.SerializeToString() == again.SerializeToString()  # seeded

    result = convert(sq.path)
    x = entry_inputs(sq, result)["data_0"]
    n = x.size
    np.testing.assert_array_equal(x, (np.arange(n).reshape(x.shape) / n).astype(np.float32))
    y = entry_inputs(rnd, result)["data_0"]
    np.testing.assert_array_equal(
        y, (np.random.default_rng(3).normal(size=y.shape) * 0.5).astype(np.float32))
    stored = stored_outputs(sq, result)
    assert list(stored) == [result.outputs[0].name] and stored[result.outputs[0].name].size
    assert stored_outputs(rnd, result) == {}

    # a stored output that does not exist, an unknown weights mode: errors
    path.write_text('[[model]]\nname = "x"\nsource = "onnx-package:backend/test/data/light/'
                    'light_squeezenet.onnx"\nreference_output = "nope.pb"\n')
    with pytest.raises(InvalidModel, match="reference_output 'nope.pb' not found"):
        read_manifest(path)
    path.write_text('[[model]]\nname = "x"\npath = "m.onnx"\nweights = "zeros"\n')
    with pytest.raises(InvalidModel, match="weights must be one of"):
        read_manifest(path)
    path.write_text('[[model]]\nname = "x"\npath = "m.onnx"\n[[model]]\nname = "x"\n'
                    'path = "n.onnx"\n')
    with pytest.raises(InvalidModel, match="used twice"):
        read_manifest(path)


def test_run_entry_digest_and_stored_output(tmp_path: Path) -> None:
    """A sha256 mismatch is an error (model_changed); a stored output is compared too."""
    tiny_cnn(tmp_path / "cnn.onnx")
    path = tmp_path / "zoo.toml"
    path.write_text("""
[[model]]
name = "changed"
path = "cnn.onnx"
free_dims = { batch = 1 }
sha256 = "0123"

[[model]]
name = "sq"
source = "onnx-package:backend/test/data/light/light_squeezenet.onnx"
inputs = "onnx-dummy"
reference_output = "light_squeezenet_output_0.pb"
""")
    changed, sq = read_manifest(path)
    r = run_entry(changed)
    assert (r.status, r.reason_code) == ("error", "model_changed")
    assert "changed upstream" in r.message
    r = run_entry(sq)
    assert r.status == "pass", r.message
    assert [o["name"] for o in r.outputs] == ["softmaxout_1", "softmaxout_1 (stored)"]
