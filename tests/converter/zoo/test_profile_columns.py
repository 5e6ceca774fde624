"""The zoo's column per profile (`webnn-convert zoo --profiles ...`, `run_zoo(profiles=...)`):
each row converted and validated once more per profile, its verdict (pass / fail / error /
unsupported (what the profile lacks)) in the text, JSON, markdown and HTML reports; a
profile column that does not pass fails the run. Verdicts against a hand-written limits file
(a profile lacking sigmoid) and a built-in profile."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
from click.testing import CliRunner
from onnx import TensorProto, helper

from cli.main import cli
from converter.passes.targets import load_target
from converter.zoo import read_manifest, run_zoo
from converter.zoo.report import render_html, render_markdown

T = {"dataTypes": ["float32", "int32"], "rankRange": {"min": 0, "max": 4}}


def _model(path: Path, op: str | None, elem: int = TensorProto.FLOAT) -> None:
    nodes = [helper.make_node("Add", ["x", "x"], ["s"])]
    if op:
        nodes.append(helper.make_node(op, ["s"], ["y"]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, [2, 3])],
                              [helper.make_tensor_value_info("y" if op else "s", elem, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    _model(tmp_path / "add.onnx", None)
    _model(tmp_path / "sig.onnx", "Sigmoid")
    _model(tmp_path / "i64.onnx", None, TensorProto.INT64)
    manifest = tmp_path / "zoo.toml"
    manifest.write_text('[[model]]\nname = "add"\npath = "add.onnx"\n'
                        '[[model]]\nname = "sig"\npath = "sig.onnx"\n'
                        '[[model]]\nname = "i64"\npath = "i64.onnx"\n')
    limits = tmp_path / "addonly.json"
    limits.write_text(json.dumps({"input": T, "constant": T, "output": T,
                                  "add": {"a": T, "b": T, "output": T}}))
    return manifest, limits


def test_run_zoo_gives_a_verdict_per_profile(tmp_path: Path) -> None:
    manifest, limits = _setup(tmp_path)
    profiles = (str(limits), "chromium-coreml")
    report = run_zoo(read_manifest(manifest), profiles=profiles)
    rows = {r.name: r for r in report.results}
    assert all(r.status == "pass" for r in rows.values())  # untargeted: all fine
    assert rows["add"].profiles == {str(limits): "pass", "chromium-coreml": "pass"}
    assert rows["sig"].profiles[str(limits)] == "unsupported (sigmoid (operator))"
    assert rows["sig"].profiles["chromium-coreml"] == "pass"
    # int64 in and out: narrowed to int32 by a target rule where the values fit, else
    # named as unsupported; never an untargeted pass turned into an error.
    assert all(v == "pass" or v.startswith("unsupported (")
               for v in rows["i64"].profiles.values()), rows["i64"].profiles
    assert not report.passed
    assert report.to_dict()["profiles"] == list(profiles)
    assert report.to_dict()["models"][1]["profiles"][str(limits)].startswith("unsupported")
    md = render_markdown(report)
    assert "| chromium-coreml | Details |" in md
    assert "| unsupported (sigmoid (operator)) | pass |" in md
    html = render_html(report)
    assert "<th>chromium-coreml</th>" in html and "unsupported (sigmoid (operator))" in html
    assert "chromium-coreml: pass" in report.to_text()


def test_cli_profiles_all_and_unknown(tmp_path: Path) -> None:
    manifest, _ = _setup(tmp_path)
    res = CliRunner().invoke(cli, ["zoo", str(manifest), "--filter", "add", "--profiles",
                                   "all", "--json", "--no-progress"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["profiles"] == ["chromium-coreml", "chromium-dml", "chromium-tflite", "portable"]
    assert doc["models"][0]["profiles"] == dict.fromkeys(doc["profiles"], "pass")
    res = CliRunner().invoke(cli, ["zoo", str(manifest), "--profiles", "firefox"])
    assert res.exit_code != 0 and "unknown target 'firefox'" in res.output
    # 'all' among other names (was refused: "unknown target 'all'"), each name once
    limits = tmp_path / "limits.json"
    limits.write_text(json.dumps(load_target("chromium-coreml").limits_dict()))
    res = CliRunner().invoke(cli, ["zoo", str(manifest), "--filter", "add", "--profiles",
                                   f"chromium-dml,all,{limits}", "--json", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["profiles"] == ["chromium-dml", "chromium-coreml",
                                                  "chromium-tflite", "portable", str(limits)]


def test_cli_target_without_browser_is_a_profile_column(tmp_path: Path) -> None:
    manifest, _ = _setup(tmp_path)
    res = CliRunner().invoke(cli, ["zoo", str(manifest), "--filter", "add", "--target",
                                   "chromium-coreml", "--json", "--no-progress"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["profiles"] == ["chromium-coreml"]
    assert doc["models"][0]["profiles"] == {"chromium-coreml": "pass"}
    res = CliRunner().invoke(cli, ["zoo", str(manifest), "--target", "firefox"])
    assert res.exit_code != 0 and "unknown target 'firefox'" in res.output
