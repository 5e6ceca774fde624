"""The architecture sweeps: the per-family table (converter.zoo.sweep) from a report, and
(slow, with their dependencies) rows of models/sweep_timm.toml and models/sweep_hf.toml run
end to end through the real CLI on a local Dask cluster."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from converter.zoo import ZooReport, ZooResult, read_manifest
from converter.zoo.sweep import family_table, markdown, reason_key, stage, totals

ROOT = Path(__file__).resolve().parents[3]
HANG_GUARD = 900

MANIFEST = """
[[model]]
name = "a_ts"
path = "x.onnx"
family = "alpha"
kind = "vision"

[[model]]
name = "a_dyn"
path = "x.onnx"
family = "alpha"
kind = "vision"

[[model]]
name = "b"
path = "x.onnx"
family = "beta"
kind = "decoder"

[[model]]
name = "c"
path = "x.onnx"
family = "gamma"
kind = "audio"
"""


def _report() -> ZooReport:
    gen = ("manifest 'm.toml': entry 'c': generator 'make_hf_sweep.py' failed: ExportError: "
           "UnsupportedOperatorError: Exporting the operator 'aten::diff' to ONNX opset "
           "version 17 is not supported")
    rows = (ZooResult("a_ts", "pass", timings={"convert": 1.0}),
            ZooResult("a_dyn", "error", reason_code="unsupported_op", timings={"total": 1.0},
                      message="1 node(s) could not be converted (NonZero x1): "
                              "[unsupported_op] NonZero 'n' (opset 18): no handler for "
                              "NonZero"),
            ZooResult("b", "fail", timings={"convert": 1.0}, message="outputs outside "
                                                                     "tolerance: y"),
            ZooResult("c", "error", reason_code="generator_failed", message=gen))
    return ZooReport(rows, "reference", "cpu", 2, "", 1.0)


def test_family_table_counts_each_stage(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(MANIFEST)
    entries = read_manifest(tmp_path / "m.toml", generate=False)
    report = _report()
    assert [stage(r) for r in report.results] == [4, 1, 3, 0]
    assert totals(report) == {"rows": 4, "exported": 3, "converted": 2, "validated": 2,
                              "matched": 1}
    assert [reason_key(r) for r in report.results] == [
        "", "unsupported op NonZero", "outputs outside tolerance",
        "exporter: operator aten::diff not supported"]
    rows = {r.family: r for r in family_table(report, entries,
                                              {"a_ts": {"p1": True}, "a_dyn": {"p1": False},
                                               "b": {"p1": True}})}
    assert rows["alpha"].counts == (2, 1, 1, 1) and rows["alpha"].kind == "vision"
    assert rows["alpha"].first_failure.startswith("a_dyn: 1 node(s) could not be converted")
    assert rows["alpha"].fits == {"p1": 1}
    assert rows["gamma"].counts == (0, 0, 0, 0)
    assert rows["gamma"].first_failure.startswith("c: export: UnsupportedOperatorError: ")
    text = markdown("demo", report, entries)
    assert "3 families, 4 rows: exported 3 (75%), converted 2 (50%), validated 2 (50%), " \
           "matched 1 (25%)." in text
    assert "| alpha | vision | 2 | 2 | 1 | 1 | 1 |" in text


def _zoo(manifest: str, *filters: str, tmp: Path) -> dict:
    args = [a for f in filters for a in ("--filter", f)]
    r = subprocess.run([sys.executable, "-c", "import sys; from cli.entry import main; "
                        "sys.argv[0] = 'webnn-convert'; sys.exit(main())", "zoo", manifest,
                        *args, "--jobs", "2", "--model-timeout", "600", "--json",
                        "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD,
                       env={**__import__("os").environ, "WEBNN_CONVERTER_CACHE": str(tmp)})
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
def test_transformers_sweep_rows_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the cluster extra is not installed")
    pytest.importorskip("transformers", reason="the transformers extra is not installed")
    report = _zoo("models/sweep_hf.toml", "hf_bert", "hf_gpt2", tmp=tmp_path)
    rows = {m["name"]: m for m in report["models"]}
    assert report["engine"] == "dask LocalCluster"
    for name in ("hf_bert", "hf_gpt2", "hf_gpt2_with_past"):
        assert rows[name]["status"] == "pass", rows[name]


@pytest.mark.slow
def test_timm_sweep_rows_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the cluster extra is not installed")
    if importlib.util.find_spec("timm") is None:  # not imported here: the generator
        pytest.skip("the sweeps extra (timm) is not installed")  # handles torchvision
    report = _zoo("models/sweep_timm.toml", "timm_test_resnet_", tmp=tmp_path)
    statuses = {m["name"]: m["status"] for m in report["models"]}
    assert statuses == {"timm_test_resnet_torchscript": "pass", "timm_test_resnet_dynamo": "pass"}
