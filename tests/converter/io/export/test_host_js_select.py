"""The JavaScript host runtime's data-dependent operators against onnxruntime (issue 24,
point 1): NonZero (empty results too), NonMaxSuppression (both box formats, ties in score,
thresholds, several batches and classes, nothing selected), TopK (ties: lower index first),
Unique (sorted, unsorted, along an axis; 4 outputs), Compress, Resize (nearest and linear,
the coordinate transforms torchvision and YOLO exports use), RoiAlign (both coordinate
transforms, avg and max, boxes partly outside); all cases in one node process.
Also: what the writer emits (only the ops used), its one-line errors, and model strings that
try to break out of their literals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx.helper as oh
import pytest

from converter.io.export.host_js import HOST_JS_OPS, host_steps_js
from converter.io.serialize.errors import WebnnExportError
from tests.converter.io.export.host_js_harness import Case, check, host_json, run_cases
from tests.converter.io.export.node_harness import _node, needs_node

rng = np.random.default_rng(2024)
f32 = np.float32
i64 = np.int64


def _boxes(batches: int, count: int) -> np.ndarray:
    corner = rng.uniform(0, 10, (batches, count, 2)).astype(f32)
    size = rng.uniform(1, 6, (batches, count, 2)).astype(f32)
    return np.concatenate([corner, corner + size], axis=-1)


def _nms(name: str, boxes: np.ndarray, scores: np.ndarray, limit: int | None, iou: float | None,
         score: float | None, **attributes: Any) -> Case:
    return Case(name, "NonMaxSuppression", {
        "boxes": boxes, "scores": scores,
        "max": None if limit is None else np.array([limit], i64),
        "iou": None if iou is None else np.array([iou], f32),
        "score": None if score is None else np.array([score], f32)}, attributes=attributes)


def _cases() -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    mask = rng.uniform(0, 1, (3, 4)) > 0.6
    add(Case("NonZero-bool", "NonZero", {"x": mask}))
    add(Case("NonZero-f32-3d", "NonZero", {"x": (rng.uniform(0, 1, (2, 3, 4)) > 0.5)
                                           .astype(f32)}))
    add(Case("NonZero-i64-1d", "NonZero", {"x": np.array([0, 3, 0, -1], i64)}))
    add(Case("NonZero-empty", "NonZero", {"x": np.zeros((2, 5), f32)}))
    add(Case("NonZero-scalar", "NonZero", {"x": np.array(3, f32)}))
    add(Case("NonZero-scalar-zero", "NonZero", {"x": np.array(0, f32)}))
    boxes = _boxes(2, 12)
    scores = rng.uniform(0, 1, (2, 3, 12)).astype(f32)
    scores[0, 0, 3] = scores[0, 0, 7] = scores[0, 0, 9] = 0.95  # ties: lower index first
    boxes[0, 7] = boxes[0, 3]  # an identical box with the same score: suppressed
    add(_nms("NMS-corners", boxes, scores, 5, 0.4, 0.2))
    add(_nms("NMS-no-score-threshold", boxes, scores, 12, 0.5, None))
    add(_nms("NMS-iou-0", boxes, scores, 3, 0.0, 0.5))
    add(_nms("NMS-nothing-above-threshold", boxes, scores, 4, 0.5, 0.999))
    add(_nms("NMS-max-0", boxes, scores, 0, 0.5, 0.1))
    add(_nms("NMS-max-absent", boxes, scores, None, None, None))
    add(_nms("NMS-score-equal-threshold", boxes, scores, 10, 0.5, float(scores[1, 2, 4])))
    flipped = boxes[..., [2, 3, 0, 1]]  # corners given the other way round
    add(_nms("NMS-flipped-corners", flipped, scores, 6, 0.3, 0.1))
    centers = np.concatenate([boxes[..., :2] + 2, rng.uniform(1, 5, (2, 12, 2)).astype(f32)],
                             axis=-1)
    add(_nms("NMS-center-point", centers, scores, 6, 0.3, 0.1, center_point_box=1))
    one = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                     [0, 10.1, 1, 11.1], [0, 100, 1, 101]]], f32)  # the ONNX spec's example
    add(_nms("NMS-onnx-example", one, np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], f32),
             3, 0.5, 0.0))
    for i in range(6):  # many boxes, scores with many ties, clustered boxes
        many = _boxes(2, 150) * np.float32(0.3 + 0.2 * i)
        tied = (rng.integers(0, 12, (2, 4, 150)) / 12).astype(f32)
        add(_nms(f"NMS-many-ties-{i}", many, tied, 40 + 10 * i, 0.1 * (i + 1),
                 None if i % 2 else 0.25, center_point_box=int(i % 3 == 2)))
    odd = _boxes(1, 40)
    odd[0, 3, 1] = np.nan  # a box with a NaN edge, one with infinite ones, one of zero width
    odd[0, 5, [0, 2]] = [-np.inf, np.inf]
    odd[0, 8, 3] = odd[0, 8, 1]
    odd[0, 12] = [0, -np.inf, 5, np.inf]
    add(_nms("NMS-non-finite-and-empty-boxes", odd, rng.uniform(0, 1, (1, 2, 40)).astype(f32),
             40, 0.2, None))
    x = rng.uniform(-2, 2, (3, 7)).astype(f32)
    x[0, [1, 4, 5]] = 1.5  # ties
    x[2, [0, 6]] = -1.75
    for largest in (1, 0):
        add(Case(f"TopK-ties-largest{largest}", "TopK", {"x": x, "k": np.array([4], i64)},
                 outputs=2, attributes={"largest": largest}))
    add(Case("TopK-axis0", "TopK", {"x": x, "k": np.array([2], i64)}, outputs=2,
             attributes={"axis": 0}, narrow=True))
    add(Case("TopK-k0", "TopK", {"x": x, "k": np.array([0], i64)}, outputs=2))
    add(Case("TopK-i64", "TopK", {"x": rng.integers(0, 4, (2, 9)).astype(i64),
                                  "k": np.array([5], i64)}, outputs=2))
    add(Case("TopK-attr-opset1", "TopK", {"x": x}, outputs=2, attributes={"k": 3}, opset=1))
    tied_rows = rng.integers(0, 5, (4, 300)).astype(f32)
    for largest in (1, 0):
        for k in (120, 7, 0):  # a sort, and a partial selection (k much smaller than n)
            add(Case(f"TopK-many-ties-{largest}-k{k}", "TopK", {"x": tied_rows,
                                                               "k": np.array([k], i64)},
                     outputs=2, attributes={"largest": largest}))
    add(Case("TopK-partial-axis0", "TopK", {"x": tied_rows.T.copy(), "k": np.array([9], i64)},
             outputs=2, attributes={"axis": 0}))
    add(Case("TopK-unsorted", "TopK", {"x": x, "k": np.array([3], i64)}, outputs=2,
             attributes={"sorted": 0}, sort_last=True))
    values = rng.integers(-3, 4, (12,)).astype(f32)
    for s in (1, 0):
        add(Case(f"Unique-sorted{s}", "Unique", {"x": values}, outputs=4,
                 attributes={"sorted": s}, opset=11))
        add(Case(f"Unique-2d-flattened-{s}", "Unique", {"x": rng.integers(0, 5, (3, 4))
                                                        .astype(i64)},
                 outputs=4, attributes={"sorted": s}, opset=11))
    rows = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [0, 9, 9], [2, 3, 4]], i64)
    add(Case("Unique-axis0", "Unique", {"x": rows}, outputs=4, attributes={"axis": 0},
             opset=11))
    add(Case("Unique-axis1", "Unique", {"x": rows.T.copy()}, outputs=4,
             attributes={"axis": -1}, opset=11))
    add(Case("Unique-one-output", "Unique", {"x": values}, opset=11))
    data = rng.uniform(-1, 1, (4, 3)).astype(f32)
    add(Case("Compress-axis0", "Compress", {"x": data, "c": np.array([1, 0, 1, 1], bool)},
             attributes={"axis": 0}))
    add(Case("Compress-short-condition", "Compress", {"x": data, "c": np.array([0, 1], bool)},
             attributes={"axis": 1}))
    add(Case("Compress-flat", "Compress", {"x": data,
                                           "c": rng.uniform(0, 1, 12) > 0.5}))
    add(Case("Compress-none", "Compress", {"x": data, "c": np.zeros(4, bool)},
             attributes={"axis": 0}))
    image = rng.uniform(0, 1, (1, 2, 5, 6)).astype(f32)
    empty = np.zeros(0, f32)
    for transform in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"):
        add(Case(f"Resize-linear-{transform}-sizes", "Resize", {
            "x": image, "roi": empty, "scales": None, "sizes": np.array([1, 2, 8, 9], i64)},
            attributes={"mode": "linear", "coordinate_transformation_mode": transform}))
        add(Case(f"Resize-linear-{transform}-down", "Resize", {
            "x": image, "roi": empty, "scales": np.array([1, 1, 0.6, 0.5], f32)},
            attributes={"mode": "linear", "coordinate_transformation_mode": transform}))
    for nearest in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        add(Case(f"Resize-nearest-{nearest}", "Resize", {
            "x": image, "roi": empty, "scales": np.array([1, 1, 2, 1.5], f32)},
            attributes={"mode": "nearest", "nearest_mode": nearest}))
    add(Case("Resize-nearest-asymmetric-floor", "Resize", {
        "x": image, "roi": empty, "scales": np.array([1, 1, 3, 2], f32)},
        attributes={"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}))
    add(Case("Resize-nearest-sizes-18", "Resize", {
        "x": image, "roi": None, "scales": None, "sizes": np.array([7, 4], i64)},
        attributes={"axes": [2, 3]}, opset=18))
    add(Case("Resize-opset10", "Resize", {"x": image, "scales": np.array([1, 1, 2, 2], f32)},
             opset=10))
    feature = rng.uniform(-1, 1, (2, 3, 8, 10)).astype(f32)
    rois = np.array([[0.5, 1.0, 6.5, 5.0], [2, 2, 3, 3], [-2, -1, 12, 9.5], [7, 4, 9.9, 7.9]],
                    f32)
    which = np.array([0, 1, 1, 0], i64)
    for transform in ("half_pixel", "output_half_pixel"):
        for mode in ("avg", "max"):
            add(Case(f"RoiAlign-{transform}-{mode}", "RoiAlign",
                     {"x": feature, "rois": rois, "batch": which}, opset=16,
                     attributes={"mode": mode, "coordinate_transformation_mode": transform,
                                 "output_height": 3, "output_width": 4}))
    add(Case("RoiAlign-sampling-scale", "RoiAlign", {"x": feature, "rois": rois * 4,
                                                     "batch": which}, opset=16,
             attributes={"sampling_ratio": 2, "spatial_scale": 0.25, "output_height": 2,
                         "output_width": 2}))
    return cases


def _branch(name: str, nodes: list[Any], output: str, elem: int = 1) -> Any:
    return oh.make_graph(nodes, name, [], [oh.make_tensor_value_info(output, elem, None)])


def _if_cases() -> list[Case]:
    """If: the chosen branch reads values defined outside it (ONNX outer-scope reads);
    branches of different shapes; an If inside a branch."""
    a, b = rng.uniform(-1, 1, (2, 3)).astype(f32), rng.uniform(-1, 1, (3,)).astype(f32)
    then = _branch("then", [oh.make_node("Add", ["a", "b"], ["t"], name="/then_add")], "t")
    other = _branch("else", [
        oh.make_node("Constant", [], ["k"], value_floats=[2.0, -1.0], name="/else_k"),
        oh.make_node("Mul", ["k", "k"], ["e"], name="/else_mul")], "e")
    inner = oh.make_node("If", ["c2"], ["n"], then_branch=then, else_branch=other, name="/inner")
    nested = _branch("nested", [inner], "n")
    cases = []
    for flag in (True, False):
        cases.append(Case(f"If-{flag}", "If", {"c": np.array(flag), "a": a, "b": b},
                          attributes={"then_branch": then, "else_branch": other},
                          outer=("a", "b")))
        cases.append(Case(f"If-nested-{flag}", "If", {"c": np.array(True), "c2": np.array(flag),
                                                      "a": a, "b": b},
                          attributes={"then_branch": nested, "else_branch": other},
                          outer=("a", "b", "c2")))
    return cases


CASES = _cases() + _if_cases()


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder: Path = tmp_path_factory.mktemp("host_js_select")
    return dict(zip((c.id for c in CASES), run_cases(CASES, folder), strict=True))


@needs_node
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_onnxruntime(case: Case, results: dict[str, dict[str, Any]]) -> None:
    check(case, results[case.id])


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


def test_only_the_ops_used_are_written() -> None:
    text = host_steps_js(host_json(CASES[0]))
    assert "function opNonZero(" in text
    assert "function opNonMaxSuppression(" not in text and "function opAdd(" not in text
    assert "broadcastShape" not in text  # a helper NonZero does not need


def test_an_op_without_javascript_is_one_line_naming_node_and_op() -> None:
    host = host_json(Case("n", "Einsum", {"x": np.zeros(2, f32)},
                          attributes={"equation": "i->i"}))
    assert "Einsum" not in HOST_JS_OPS
    with pytest.raises(WebnnExportError) as error:
        host_steps_js(host)
    message = str(error.value)
    assert "\n" not in message and "'/n'" in message and "Einsum" in message
    other = dict(host, nodes=[dict(host["nodes"][0], op="Add", domain="com.microsoft")])
    with pytest.raises(WebnnExportError, match="com.microsoft::Add"):
        host_steps_js(other)


@pytest.mark.parametrize("broken", [
    {"attributes": {"__proto__": {"int": 1}}},
    {"attributes": {"axis); alert(1": {"int": 1}}},
    {"attributes": {"axis": {"int": "1; alert(1)"}}},
    {"attributes": {"axis": {"tensor": {"dataType": "int64", "shape": [1],
                                        "base64": "AAAA\"); alert(1"}}}},
    {"inputs": [1]},
])
def test_malformed_steps_are_refused(broken: dict[str, Any]) -> None:
    host = host_json(Case("n", "Identity", {"x": np.zeros(2, f32)}))
    host["nodes"] = [dict(host["nodes"][0], **broken)]
    with pytest.raises(WebnnExportError):
        host_steps_js(host)


HOSTILE = ['"</script><script>alert(1)</script>', "__proto__", "a`${b}`\u2028c", "x\\\"y"]

CHECK_NAMES = r"""
const mod = await import(process.argv[2]);
const out = mod.runHostSteps({[NAMES[0]]: {dataType: "float32", shape: [2], data: new Float32Array([1, 2])}});
console.log(JSON.stringify({keys: Object.keys(out), values: Object.values(out).map((t) => Array.from(t.data)),
                            inputs: mod.HOST_INPUTS.map((r) => r.name), outputs: mod.HOST_OUTPUTS}));
"""


@needs_node
def test_model_strings_stay_strings(tmp_path: Path) -> None:
    """Node, value and constant names that try to end their literal or a <script> element
    (or are `__proto__`) are data: the module runs and gives them back unchanged."""
    base = host_json(Case("n", "Add", {"a": np.zeros(2, f32), "b": np.ones(2, f32)},
                          constants=("b",)))
    first, proto, third, fourth = HOSTILE
    base["inputs"] = [{"name": first, "source": "graph"}]
    base["constants"] = {fourth: base["constants"]["b"]}
    base["nodes"][0].update(name=third, inputs=[first, fourth], outputs=[proto])
    base["outputs"] = [proto]
    text = host_steps_js(base)
    assert "</script" not in text.lower() and "\u2028" not in text
    module = tmp_path / "steps.mjs"
    module.write_text(text, encoding="utf-8")
    check_file = tmp_path / "check.mjs"
    check_file.write_text(f"const NAMES = {json.dumps(HOSTILE)};\n{CHECK_NAMES}")
    run = _node(check_file, module.as_uri())
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got == {"keys": [proto], "values": [[2, 3]], "inputs": [first], "outputs": [proto]}


CHECK_COPIES = r"""
const mod = await import(process.argv[2]);
const first = mod.runHostSteps({});
first.out0.data[0] = 99;
const second = mod.runHostSteps({});
console.log(JSON.stringify(Array.from(second.out0.data)));
"""


@needs_node
def test_outputs_are_copies(tmp_path: Path) -> None:
    """Changing an output (here the Identity of a constant) does not change the next run."""
    host = host_json(Case("n", "Identity", {"c": np.array([1.5, 2.5], f32)},
                          constants=("c",)))
    module = tmp_path / "steps.mjs"
    module.write_text(host_steps_js(host), encoding="utf-8")
    (tmp_path / "check.mjs").write_text(CHECK_COPIES)
    run = _node(tmp_path / "check.mjs", module.as_uri())
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [1.5, 2.5]


CHECK_FILE = r"""
import fs from "node:fs";
globalThis.fetch = async (url) => ({ok: true, status: 200,
  json: async () => JSON.parse(fs.readFileSync(new URL(url), "utf8"))});
const mod = await import(process.argv[2]);
let before = "";
try { mod.runHostSteps({}); } catch (error) { before = error.message; }
await mod.loadHostSteps();
const out = mod.runHostSteps({});
console.log(JSON.stringify({before, file: mod.HOST_FILE, values: Array.from(out.out0.data)}));
"""


@needs_node
def test_constants_read_from_the_host_file(tmp_path: Path) -> None:
    """With a constants file the module holds no constant data: loadHostSteps() reads them
    from `<stem>.host.json` beside it (once); runHostSteps before that says so."""
    table = np.arange(12, dtype=f32).reshape(3, 4) / 4
    host = host_json(Case("n", "Identity", {"c": table}, constants=("c",)))
    text = host_steps_js(host, "steps.host.json")
    assert host["constants"]["c"]["base64"] not in text
    (tmp_path / "steps.host.json").write_text(json.dumps(host))
    module = tmp_path / "steps.mjs"
    module.write_text(text, encoding="utf-8")
    (tmp_path / "check.mjs").write_text(CHECK_FILE)
    run = _node(tmp_path / "check.mjs", module.as_uri())
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert "loadHostSteps" in got["before"] and got["file"] == "steps.host.json"
    assert got["values"] == table.reshape(-1).tolist()
