"""The quantized sweep in the real browser: every dequantizeLinear -> operator -> quantizeLinear
case of converter.validate.sweep_quantized (the patterns Chromium's LiteRT backend fuses into
integer kernels, int8 and uint8, per tensor and per channel, integer and float I/O) runs as
converted and, where the chromium-tflite rules rewrite it, rewritten. It fails when a case fails
without a rule that fixes it or a known failure (converter/passes/targets/chromium-tflite/
known_failures.json, entries with "sweep": "quantized"), when a rule breaks a case on the
reference runtime, or when such a known failure matches nothing."""

from __future__ import annotations

from typing import Any

import pytest

from converter.passes.targets import load_target
from converter.validate.sweep import check_sweep, sweep
from converter.validate.sweep_quantized import SWEEP, quantized_cases

pytestmark = pytest.mark.browser


def test_every_quantized_pattern_passes_with_the_rules(browser: Any) -> None:
    target = load_target("chromium-tflite")
    doc = sweep(quantized_cases(), target=target, setup=browser, kind=SWEEP)
    new, stale = check_sweep(doc, target.known_failures())
    assert not new, (f"{len(new)} quantized case(s) fail in {doc['browser']} without a rule or a "
                     "known failure:\n" + "\n".join(new))
    assert not stale, "known failures that match no failing case:\n" + "\n".join(stale)
    # the deviations the rules exist for are still there as converted
    raw = {c["name"]: c["status"] for c in doc["cases"]}
    assert raw["reduceMax int8 other int I/O"] == "wrong"
    assert raw["conv2d int8 channel-scale int I/O"] == "rejected"


@pytest.mark.parametrize("target", ["chromium-tflite", None])
@pytest.mark.parametrize(("model", "atol"), [("cnn", None), ("unet", 0.032)])
def test_int8_zoo_models_build_and_match(browser: Any, tmp_path: Any, model: str,
                                         atol: float | None, target: str | None) -> None:
    """The zoo's int8 TFLite models (converter/zoo/models/make_int8_tflite.py; the U-Net has
    float I/O and the tolerance of its zoo entry: 8 steps of 1/256, what LiteRT's integer
    kernels differ from the spec's float computation by) against LiteRT, on the reference
    runtime and in the browser, converted for chromium-tflite and for the default target. The
    U-Net failed to build for chromium-tflite before rule quantize-integers."""
    from converter.validate import validate
    from converter.zoo.models.make_int8_tflite import make

    pytest.importorskip("ai_edge_litert")
    path = tmp_path / f"{model}.tflite"
    make(path, seed=0, model=model)
    report = validate(str(path), browser=True, target=target, atol=atol,
                      rtol=0.0 if atol else None)
    assert report.passed, report.to_text()
    assert report.browser is not None and report.browser.status == "pass", \
        report.browser.to_text() if report.browser else "no browser run"
