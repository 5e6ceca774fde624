"""The real-world suite (models/realworld.toml, docs/realworld.md): torchvision models exported
by both torch exporters, litert-torch exports (float32, PT2E static and dynamic int8) and
models shipped inside PyPI wheels, as models/make_realworld.py writes them into the cache
folder (skipped with the command when they are not there).

Per row: a conversion without flags converts, or fails with exactly the row's flags as its
hint (concrete values); with those flags the converted graph matches onnxruntime / LiteRT
(converter.validate, the row's tolerance or validate's default for the compute type).
Detection rows (boxes, scores, labels of a variable count): the detections equal
onnxruntime's after sorting ties (scores within the tolerance, labels exactly)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.models.realworld import (
    Row,
    check_first_error,
    convert_row,
    litert_spread,
    require_model,
    rows,
    sorted_detections,
)

pytestmark = pytest.mark.slow
ROWS = rows()


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_the_first_error_names_the_rows_flags(row: Row, tmp_path: Path) -> None:
    require_model(row)
    check_first_error(row, tmp_path / "out")


@pytest.mark.parametrize("row", [r for r in ROWS if not r.detection],
                         ids=[r.name for r in ROWS if not r.detection])
def test_converts_and_matches_its_framework(row: Row) -> None:
    from converter.api import validate

    path = require_model(row)
    if row.table.get("kernel_spread"):
        _check_within_litert_kernel_spread(row)
        return
    report = validate(path, free_dims=row.free_dims or None, rtol=row.rtol, atol=row.atol)
    if not report.passed and row.known_gap:
        pytest.xfail(f"{row.name}: {row.known_gap}")
    assert report.passed, report.to_text()
    for c in report.outputs:  # a real comparison: outputs not all near zero
        assert c.max_abs == 0 or c.max_abs / c.max_rel > 1e-3, (c.name, c.max_abs, c.max_rel)
        assert c.cosine >= 0.99, (c.name, c.cosine)


@pytest.mark.parametrize("row", [r for r in ROWS if r.detection],
                         ids=[r.name for r in ROWS if r.detection])
def test_detections_equal_onnxruntimes(row: Row) -> None:
    from converter.api import make_inputs, run_source

    path, result = convert_row(row)
    feeds = make_inputs(result.source, seed=0)
    ours = result.run(feeds)
    ref = run_source("onnx", path, result.source, feeds).outputs
    names = ["boxes", "scores", "labels"]  # the manifest's output_names, in any order
    a, b = sorted_detections(ours, names), sorted_detections(ref, names)
    assert len(a) == len(b) > 0, (len(a), len(b))
    atol = row.atol if row.atol is not None else 1e-3
    for (s1, l1, box1), (s2, l2, box2) in zip(a, b, strict=True):
        assert l1 == l2 and abs(s1 - s2) <= atol, ((s1, l1), (s2, l2))
        np.testing.assert_allclose(box1, box2, atol=atol * 320, rtol=1e-4)


def _check_within_litert_kernel_spread(row: Row) -> None:
    """Ours is no further from LiteRT (XNNPACK, its default) than LiteRT's builtin kernels
    are, output by output, on validate's seed-0 inputs; and cosine >= 0.99."""
    from converter.api import convert, make_inputs, run_source

    result = convert(row.path, free_dims=row.free_dims or None)
    feeds = make_inputs(result.source, seed=0)
    ours = result.run(feeds)
    xnnpack = run_source("tflite", row.path, result.source, feeds).outputs
    for name, spread in litert_spread(row.path, feeds, xnnpack).items():
        ref = np.asarray(xnnpack[name], np.float64)
        mine = np.asarray(ours[name], np.float64).reshape(ref.shape)
        assert np.abs(mine - ref).max() <= spread, (name, np.abs(mine - ref).max(), spread)
        cosine = float((mine * ref).sum() / np.sqrt((mine * mine).sum() * (ref * ref).sum()))
        assert cosine >= 0.99, (name, cosine)
