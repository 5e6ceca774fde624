"""Untrusted input through the real CLI: hostile names, domains, file names and foreign
exception messages all end as one escaped `error: ` line (printable characters only, exit
code 2); long names keep head and tail, many failed nodes are counted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.cli.untrusted.cli_run import (
    invoke,
    one_error,
    raiser,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


# -- one-line messages ------------------------------------------------------------------------


def _relu_model(path: Path, *, domain: str = "", opset: int = 13, name: str = "relu",
                op: str = "Relu") -> Path:
    node = helper.make_node(op, ["x"], ["y"], name=name, domain=domain)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)]
                                                 if domain else [])
    onnx.save_model(helper.make_model(graph, opset_imports=opsets, ir_version=8), path)
    return path


HOSTILE = {"newline": "com.ex\nample", "u2028": "com.ex\u2028ample", "u2029": "a\u2029b",
           "escape": "a\x1b[31mred", "cr": "a\rb", "nel": "a\x85b", "bidi": "a\u202eb",
           "nul": "a\x00b", "tab": "a\tb"}


@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_hostile_domains_and_names_are_escaped(tmp_path: Path, key: str) -> None:
    text = HOSTILE[key]
    model = _relu_model(tmp_path / "m.onnx", domain=text, name=f"node{text}")
    line = one_error(invoke("convert", model, "-o", tmp_path / "o"))
    assert "could not be converted" in line
    escaped = text.encode("ascii", "backslashreplace").decode().replace("\\x0a", "\\n")
    assert repr(text)[1:-1] in line or escaped in line, line
    line = one_error(invoke("inspect", model))
    assert "unsupported op type" in line


def test_long_names_keep_head_and_tail(tmp_path: Path) -> None:
    name = "head_" + "x" * 20000 + "_tail"
    model = _relu_model(tmp_path / "m.onnx", domain="com.x", name=name)
    line = one_error(invoke("convert", model, "-o", tmp_path / "o"))
    assert "'head_" in line and "_tail'" in line and "characters cut" in line
    assert len(line) < 1000


def test_many_failed_nodes_are_counted_not_listed(tmp_path: Path) -> None:
    nodes = [helper.make_node("Frob", ["x"], [f"t{i}"], name=f"n{i}", domain="com.x")
             for i in range(60)]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(f"t{i}", TensorProto.FLOAT, [2])
                               for i in range(60)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.x", 1)])
    onnx.save_model(model, tmp_path / "m.onnx")
    line = one_error(invoke("convert", tmp_path / "m.onnx", "-o", tmp_path / "o"))
    assert "60 node(s)" in line and "and 40 more (--json lists every one)" in line
    r = invoke("convert", tmp_path / "m.onnx", "-o", tmp_path / "o", "--json")
    assert len(json.loads(r.stdout)["error"]["errors"]) == 60


@pytest.mark.parametrize("command", ["convert", "inspect", "validate"])
def test_an_opset_beyond_int64_is_one_line(tmp_path: Path, command: str) -> None:
    model = _relu_model(tmp_path / "m.onnx", opset=2**63 - 1)
    line = one_error(invoke(command, model))
    assert "opset 9223372036854775807" in line


def test_hostile_file_names_are_escaped(tmp_path: Path) -> None:
    line = one_error(invoke("convert", tmp_path / "no\nsuch\u2028file.onnx"))
    assert "no\\nsuch\\u2028file.onnx" in line
    bad = tmp_path / "bad\x1bname.onnx"
    bad.write_bytes(b"\x08\x07" + os.urandom(64))
    assert "\\x1b" in one_error(invoke("convert", bad, "-o", tmp_path / "o"))


def test_a_truncated_model_is_one_line(tiny: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(tiny.read_bytes()[:200])
    assert "cut.onnx" in one_error(invoke("convert", cut, "-o", tmp_path / "o"))


@pytest.mark.parametrize("exc", [
    onnx.checker.ValidationError("Field 'type' of 'value_info' is required\n\n==> Context: "
                                 "Bad node spec for node.\u2028Name: x"),
    ValueError("setting an array element with a sequence.\n  The requested array\r\n x"),
    KeyError("a\nb"),
    RuntimeError("internal\ntrouble\x1b[2J"),
    OSError(5, "I/O\nerror", "/tmp/x\ny"),
], ids=["checker", "numpy", "keyerror", "internal", "oserror"])
def test_multi_line_foreign_messages_become_one_line(tiny: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     exc: BaseException) -> None:
    from google.protobuf.message import DecodeError

    import converter.api

    monkeypatch.setattr(converter.api, "convert", raiser(exc))
    one_error(invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "o"))
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "o", "--json")
    one_error(r)
    assert json.loads(r.stdout)["error"]["message"]
    monkeypatch.setattr(converter.api, "convert", raiser(DecodeError("bad\nwire type")))
    one_error(invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "o"))


@pytest.mark.parametrize("args", [["--rtol", "abc"], ["--nope"], ["--backend", "x\ny"],
                                  ["--seed", "1.5"]])
def test_usage_errors_are_one_line(tiny: Path, args: list[str]) -> None:
    line = one_error(invoke("validate", tiny, *args))
    assert "--help" in line
    one_error(invoke("no\nsuch-command"))
