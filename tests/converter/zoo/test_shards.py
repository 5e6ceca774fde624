"""`webnn-convert zoo --shard K/N` and `zoo merge` (converter.zoo.shards): the shards are
disjoint and cover the run, balanced by a previous report's durations when given, and their
merged reports equal one unsharded run's report (up to timings, dates and job counts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from converter.core.errors import InvalidModel
from converter.zoo import ZooReport, ZooResult
from converter.zoo.shards import assign, comparable, merge, parse_shard

RELU = '''
from pathlib import Path

import onnx
from onnx import TensorProto, helper


def make(path: Path, n: int = 4, op: str = "Relu") -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
'''


def zoo_manifest(folder: Path, extra: str = "") -> Path:
    """Seven rows: five tiny Relu / Tanh models, one unsupported op, one missing file."""
    (folder / "make_relu.py").write_text(RELU)
    rows = [f'[[model]]\nname = "m{n}"\nsource = "generated:make_relu.py"\n'
            f'args = {{ n = {n}, op = "{"Tanh" if n % 2 else "Relu"}" }}\n'
            for n in range(2, 7)]
    rows.append('[[model]]\nname = "bad"\nsource = "generated:make_relu.py"\n'
                'args = { op = "Frobnicate" }\n')
    rows.append('[[model]]\nname = "gone"\npath = "gone.onnx"\n')
    path = folder / "zoo.toml"
    path.write_text("\n".join(rows) + extra)
    return path


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBNN_CONVERTER_CACHE", str(tmp_path / "cache"))


def _zoo(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["zoo", *args, "--no-progress"])
    return r.exit_code, r.output


def _report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())


def test_parse_shard() -> None:
    assert parse_shard("2/3") == (2, 3) and parse_shard("1/1") == (1, 1)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "1/2/3"):
        with pytest.raises(ValueError, match="K/N"):
            parse_shard(bad)


def test_assign_round_robin_and_by_durations() -> None:
    names = [f"m{i}" for i in range(7)]
    assert assign(names, 3) == [0, 1, 2, 0, 1, 2, 0]
    past = {"m0": 10.0, "m1": 9.0, "m2": 1.0, "m3": 1.0, "m4": 1.0, "m5": 1.0}  # m6: median
    shards = assign(names, 2, past)
    loads = [sum(past.get(n, 1.0) for n, s in zip(names, shards, strict=True) if s == k)
             for k in range(2)]
    assert sorted(loads) == [12.0, 12.0]  # round robin would give 13 / 11
    assert assign(names, 2, past) == shards  # deterministic


def test_shards_merge_to_the_single_run_report(tmp_path: Path) -> None:
    manifest = zoo_manifest(tmp_path)
    code, out = _zoo(str(manifest), "--report", str(tmp_path / "all"))
    assert code == 1, out  # "bad" fails
    single = _report(tmp_path / "all")
    assert single["summary"] == {"total": 7, "pass": 5, "fail": 0, "error": 1, "skipped": 1}
    parts = []
    for k in (1, 2, 3):
        folder = tmp_path / f"shard{k}"
        _zoo(str(manifest), "--shard", f"{k}/3", "--report", str(folder),
             "--durations", str(tmp_path / "all" / "report.json"))
        parts.append(folder / "report.json")
        assert _report(folder)["shard"] == f"{k}/3"
    names = [[m["name"] for m in _report(p.parent)["models"]] for p in parts]
    assert sorted(sum(names, [])) == sorted(m["name"] for m in single["models"])
    code, out = _zoo("merge", *map(str, parts), "--report", str(tmp_path / "merged"))
    assert code == 1 and "7 models: 5 pass, 0 fail, 1 error, 1 skipped" in out, out
    merged = _report(tmp_path / "merged")
    assert comparable(merged) == comparable(single)
    assert [m["name"] for m in merged["models"]] == [m["name"] for m in single["models"]]
    assert (tmp_path / "merged" / "report.md").is_file()


def test_merge_refuses_what_is_not_one_runs_shards(tmp_path: Path) -> None:
    manifest = zoo_manifest(tmp_path)
    for k in (1, 2):
        _zoo(str(manifest), "--shard", f"{k}/2", "--report", str(tmp_path / f"s{k}"))
    _zoo(str(manifest), "--filter", "m", "--shard", "1/2", "--report", str(tmp_path / "other"))
    s1, s2 = (str(tmp_path / f"s{k}" / "report.json") for k in (1, 2))
    for args, message in [((s1,), "shard(s) 2/2 missing"),
                          ((s1, s1, s2), "shard 1/2 given twice"),
                          ((s1, str(tmp_path / "other" / "report.json")), "of another run"),
                          ((str(manifest),), "is not a zoo report.json"),
                          ((), "give the shards' report.json files")]:
        r = CliRunner().invoke(cli, ["zoo", "merge", *args])
        assert r.exit_code == 2, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], \
            r.stderr
    unsharded = ZooReport((ZooResult("a", "pass"),), "reference", "cpu", 1, "", 0.0)
    with pytest.raises(InvalidModel, match="not a shard's report"):
        merge([unsharded])


def test_shard_option_errors(tmp_path: Path) -> None:
    manifest = zoo_manifest(tmp_path)
    for args, message in [(("--shard", "4/3"), "1 <= K <= N"),
                          (("--durations", str(manifest)), "give --shard K/N too"),
                          (("--shard", "1/2", "--durations", str(manifest)),
                           "is not a zoo report.json")]:
        r = CliRunner().invoke(cli, ["zoo", str(manifest), *args])
        assert r.exit_code == 2 and message in r.stderr, r.output
