"""JavaScript/HTML export: syntax (`node --check`), a replay of the generated module in node
against a recording fake `MLGraphBuilder` (every call, option and constant byte compared with
the graph), inert output for hostile names, and the page run in node with a fake DOM and a fake
WebNN context. The node harnesses are in `node_harness`."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.core.webnn.operators import operator
from converter.io.export.javascript import check_stem, to_javascript
from converter.io.export.literals import html_literal, js_string
from converter.io.serialize.plan import constant_bytes, plan
from tests.converter.io.export.graphs import FAMILIES, HOSTILE_NAMES
from tests.converter.io.export.node_harness import (
    TYPED,
    _enc,
    _node,
    _replay,
    _run_page,
    _script,
    _write,
    needs_node,
)


# -- syntax ---------------------------------------------------------------------------------
@needs_node
@pytest.mark.parametrize("family", ["hostile", "recurrent", "constants"])
def test_module_and_page_pass_node_check(family: str, tmp_path: Path) -> None:
    """(The replay test below imports the module of every family, which parses it too.)"""
    js, html, _ = _write(FAMILIES[family]().graph, tmp_path)
    result = _node("--check", js)
    assert result.returncode == 0, result.stderr
    script = tmp_path / "page.mjs"
    script.write_text(_script(html.read_text()))
    result = _node("--check", script)
    assert result.returncode == 0, result.stderr


# -- replay in node -------------------------------------------------------------------------
def _decode(value: Any, scratch: dict[int, MLOperand]) -> Any:
    """A recorded JavaScript argument as the Python builder takes it."""
    if isinstance(value, dict) and "operand" in value:
        return scratch[value["operand"]]
    if isinstance(value, dict) and "bigint" in value:
        return int(value["bigint"])
    if isinstance(value, dict) and "number" in value:
        return float(value["number"].replace("Infinity", "inf"))
    if isinstance(value, list):
        return [_decode(v, scratch) for v in value]
    if isinstance(value, dict):  # the options record
        return {k: _decode(v, scratch) for k, v in value.items()}
    return value


@needs_node
@pytest.mark.parametrize("family", list(FAMILIES))
def test_module_replays_the_graph(family: str, tmp_path: Path) -> None:
    """Run buildGraph(loadWeights()) in node with a recording MLGraphBuilder; every call must
    match the graph: input names/descriptors, constant bytes, op names, positional
    arguments and the output record. Options the module leaves out are the builder's
    defaults: the recorded calls replayed through the Python MLGraphBuilder (the spec's
    method steps fill in what is absent) record exactly the graph's options."""
    graph = FAMILIES[family]().graph
    p = plan(graph)
    js, _, weights = _write(graph, tmp_path)
    out = _replay(graph, js, weights, tmp_path)
    calls = out["calls"]
    assert len(calls) == len(graph.inputs) + len(p.constants) + len(graph.operations) + 1

    ids: dict[int, int] = {}
    scratch: dict[int, MLOperand] = {}
    b = MLGraphBuilder(ML().create_context())
    it = iter(calls)
    for name, operand in graph.inputs.items():
        got = next(it)
        ids[id(operand)] = len(ids)
        assert got == {"op": "input", "out": [ids[id(operand)]], "args": [
            name, {"dataType": operand.data_type, "shape": list(operand.shape)}]}
        scratch[ids[id(operand)]] = b.input(name, list(operand.shape), operand.data_type)
    for c in p.constants:
        operand, got = c.operand, next(it)
        ids[id(operand)] = len(ids)
        assert got["op"] == "constant" and got["out"] == [ids[id(operand)]]
        desc, data = got["args"]
        assert desc == {"dataType": operand.data_type, "shape": list(operand.shape)}
        assert bytes.fromhex(data["hex"]) == constant_bytes(operand), c
        assert data["typed"] in ("Uint8Array", "Uint16Array", TYPED.get(operand.data_type))
        scratch[ids[id(operand)]] = b.constant(np.asarray(operand.value), operand.data_type)
    for operation in graph.operations:
        got = next(it)
        assert got["op"] == operation.op
        positional = len(operator(operation.op).positional)
        assert got["args"][:positional] == [_enc(a, ids) for a in operation.args]
        written = got["args"][positional:]
        options = _decode(written[0], scratch) if written else {}
        assert len(written) <= 1 and set(options) <= set(operation.options)
        replayed = b.apply(operation.op, _decode(got["args"][:positional], scratch), options)
        for o, r in zip(operation.outputs, replayed, strict=True):
            ids[id(o)] = len(ids)
            scratch[ids[id(o)]] = r
        assert got["out"] == [ids[id(o)] for o in operation.outputs]
        rec = replayed[0].operator
        assert rec is not None
        back = {id(v): k for k, v in scratch.items()}
        assert {k: _enc(v, back) for k, v in rec.options.items()} == {
            k: _enc(v, ids) for k, v in operation.options.items() if v is not None}, operation.op
    build = next(it)
    assert build["op"] == "build" and build["plainPrototype"]
    assert build["keys"] == list(graph.outputs)
    assert build["ids"] == [ids[id(o)] for o in graph.outputs.values()]
    assert out["graph"] == {"fake": True}
    assert out["name"] == "the graph"
    assert [i["name"] for i in out["inputs"]] == list(graph.inputs)
    assert [o["name"] for o in out["outputs"]] == list(graph.outputs)
    assert [o["shape"] for o in out["outputs"]] == [list(o.shape)
                                                    for o in graph.outputs.values()]


# -- hostile names --------------------------------------------------------------------------
DANGEROUS = ["</script>", "<script>", "\u2028", "\u2029", "\n", "<!--", "]]>", "&amp;"]


def test_hostile_names_are_inert_in_module_and_page() -> None:
    graph = FAMILIES["hostile"]().graph
    files = to_javascript(graph, "model", name="</script><b>bold</b>\u2028")
    for text in (files.module, files.html):
        assert text.isascii() or text is files.html
        for name in HOSTILE_NAMES:
            if any(d in name for d in DANGEROUS) or '"' in name or "\\" in name:
                assert name not in text, name
    assert files.module.isascii()
    assert "</script" not in files.module.lower() and "<!--" not in files.module
    assert files.html.lower().count("</script") == 1
    assert "<b>" not in files.module and "<b>" not in files.html
    # every hostile name is still present, escaped, as a JSON string literal
    for name in HOSTILE_NAMES:
        assert js_string(name) in files.module


@pytest.mark.parametrize("text", [*HOSTILE_NAMES, "\ud800", "\x00\x1f\x7f", "`${1}`"])
def test_js_string_is_json_and_inert(text: str) -> None:
    literal = js_string(text)
    assert json.loads(literal) == text
    assert literal.isascii()
    assert not set(literal) & set("<>&\u2028\u2029\n\r")
    assert literal.startswith('"') and literal.endswith('"')


@pytest.mark.parametrize("stem", ["../x", "a/b", "", ".hidden", "x y", "é", "a\\b"])
def test_unsafe_stems_are_rejected(stem: str) -> None:
    with pytest.raises(ValueError, match="plain file name"):
        check_stem(stem)


def test_page_mentions_the_module_and_weights_as_literals_only() -> None:
    files = to_javascript(FAMILIES["conv"]().graph, "my-model.v2")
    assert 'const MODULE_URL = "./my-model.v2.js";' in files.html
    assert 'const WEIGHTS_URL = "./my-model.v2.weights";' in files.html
    assert 'export const WEIGHTS_FILE = "my-model.v2.weights";' in files.module
    assert "navigator.ml" in files.html and "createContext" in files.html
    assert "createModel(context, weights)" in files.html and ".compute(feeds)" in files.html
    assert "dispatch(" in files.module and "readTensor(" in files.module
    assert "WebNN is not available" in files.html



# -- the page, run in node with a fake DOM and a fake WebNN context -------------------------
@needs_node
@pytest.mark.parametrize("family", ["hostile", "shape", "float16"])
def test_page_runs_with_tensors_and_prints_outputs(family: str, tmp_path: Path) -> None:
    graph = FAMILIES[family]().graph
    out = _run_page(tmp_path, graph)
    assert out["status"] == "Done.", out["status"]
    assert out["title"] == "WebNN model: page test"
    assert out["built"] == [list(graph.outputs)]
    assert len(out["dispatched"]) == 1 + 3  # first run + 3 timed runs
    assert out["dispatched"][0] == {"inputs": list(graph.inputs), "outputs": list(graph.outputs)}
    # compute() writes every input on each of the 4 runs, into the same tensors
    assert [w["length"] for w in out["written"]] == [o.descriptor.size for o in
                                                      graph.inputs.values()] * 4
    assert all(w["writable"] for w in out["written"])
    for name, operand in graph.outputs.items():
        assert f"{json.dumps(name, ensure_ascii=False)}: {operand.data_type}[" in out["log"]
    assert "first run (write + dispatch + read)" in out["log"] and "average of 3 runs" in out["log"]
    if family == "float16":
        assert out["written"][0]["type"] in ("Uint16Array", "Float16Array")
    if family == "shape":
        assert "BigInt64Array" in [w["type"] for w in out["written"]]


@needs_node
def test_page_uses_json_inputs_and_reports_bad_ones(tmp_path: Path) -> None:
    graph = FAMILIES["float16"]().graph
    values = list(range(50))
    out = _run_page(tmp_path, graph, inputs=json.dumps({"x": [values[:25], values[25:]]}))
    assert out["status"] == "Done."
    assert {(w["first"], w["length"]) for w in out["written"]} == {(0, 50)}
    out = _run_page(tmp_path, graph, inputs=json.dumps({"x": [1, 2, 3]}))
    assert out["statusClass"] == "error"
    assert "3 values, expected 50" in out["status"]


@needs_node
def test_page_fills_the_timings_table(tmp_path: Path) -> None:
    out = _run_page(tmp_path, FAMILIES["conv"]().graph)
    assert out["status"] == "Done."
    for key in ("t-weights", "t-context", "t-build", "t-first"):
        assert re.fullmatch(r"\d+\.\d\d ms", out["timings"][key]), (key, out["timings"])
    assert re.fullmatch(r"\d+\.\d\d ms \(3 runs\)", out["timings"]["t-average"])


@needs_node
def test_page_explains_file_urls_on_the_page(tmp_path: Path) -> None:
    """Opened from file://, the page says why that fails and how to serve it, and tries
    neither the module nor the weights."""
    out = _run_page(tmp_path, FAMILIES["conv"]().graph, mode="file")
    assert out["statusClass"] == "error"
    assert "file://" in out["status"] and "block module scripts" in out["status"]
    assert "python3 -m http.server" in out["status"]
    assert "http://localhost:8000/model.html" in out["status"]
    assert out["fetches"] == 0 and out["built"] == [] and out["dispatched"] == []


class _Text(HTMLParser):
    """The page's text outside <script>/<style>, character references decoded, and the
    cells of each table row."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._skip = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip = tag in ("script", "style")
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        self._skip = False
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)
            if self._cell is not None:
                self._cell.append(data)


def test_page_lists_hostile_names_inertly() -> None:
    """The static input/output tables show every name exactly (the HTML parser as the
    oracle), while the markup holds none of them raw and only one script element."""
    graph = FAMILIES["hostile"]().graph
    files = to_javascript(graph, "my-model", name="</script><b>x</b>\u2028")
    page = files.html
    assert page.isascii() and page.lower().count("</script") == 1 and "<b>" not in page
    parser = _Text()
    parser.feed(page)
    rows = [r for r in parser.rows if len(r) == 3 and r != ["Name", "Data type", "Shape"]]
    expected = [[n, o.data_type, f"[{', '.join(str(d) for d in o.shape)}]"]
                for items in (graph.inputs, graph.outputs) for n, o in items.items()]
    assert rows == expected
    text = "".join(parser.text)
    assert "WebNN model: </script><b>x</b>\u2028" in text
    assert "http://localhost:8000/my-model.html" in text
    assert "python3 -m http.server" in text and "file://" in text
    for name in HOSTILE_NAMES:
        if set(name) & set("<>&\"'\\\n\t\u2028\u2029") or not name.isascii():
            assert name not in page


@pytest.mark.parametrize("text", [*HOSTILE_NAMES, "\ud800", "\x00", "plain name_1.x"])
def test_html_literal_is_inert_and_exact(text: str) -> None:
    literal = html_literal(text)
    assert literal.isascii() and not set(literal) & set("<>\"'\\\n\r\t`")
    parser = _Text()
    parser.feed(f"<p>{literal}</p>")
    decoded = "".join(parser.text)
    if "\ud800" in text or "\x00" in text:
        assert decoded == "\ufffd"
    else:
        assert decoded == text


@needs_node
def test_page_says_when_webnn_is_unavailable(tmp_path: Path) -> None:
    out = _run_page(tmp_path, FAMILIES["conv"]().graph, mode="none")
    assert out["statusClass"] == "error"
    assert "WebNN is not available" in out["status"]
    assert out["dispatched"] == []
