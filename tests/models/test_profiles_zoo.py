"""Issue 15 "done when", on a representative subset of the zoo (converter/zoo/models/zoo.toml,
zoo_tflite.toml): a CNN (SqueezeNet), an RNN (bidirectional peephole LSTM), a TFLite
model (MediaPipe face detection, sparse: its depth-to-space passes through rank 6) and an
int8 model (the generated int8 CNN) convert and validate under each built-in profile,
exactly as `webnn-convert zoo --profiles all` runs them (`run_entry(target=...)`: against
onnxruntime / LiteRT on the manifest's inputs and tolerances), and the lowered graph uses
only what the profile's `opSupportLimits()` declares (`check_graph` empty).

The int8 CNN under chromium-coreml exercises rule widen-io: Core ML's `input` and `output`
limits are float16, float32 and int32 (Chromium's GraphBuilderCoreml::GetContextProperties,
kFloatsAndInt32), so its int8 graph input and output are carried in int32; the sparse face
detector under chromium-coreml exercises reshape-chains (rank 6 where Core ML stops at 5).
"""

from __future__ import annotations

import pytest

from converter.conversion.pipeline import convert
from converter.frontends.detect import detect_format
from converter.passes.targets import known_targets, load_target
from converter.passes.targets.check import check_graph, summary
from converter.zoo import (
    ZooEntry,
    convert_options,
    default_manifests,
    load_model,
    read_manifests,
    run_entry,
)

SUBSET = ("light_squeezenet", "generated_lstm_bidi_peephole",
          "mediapipe-face-detection-full-range-sparse", "generated-int8-cnn")
PROFILES = ("chromium-tflite", "chromium-dml", "chromium-coreml", "portable")
ENTRIES = {e.name: e for e in read_manifests(default_manifests())
           if e.name in SUBSET}


def _lowered_violations(entry: ZooEntry, profile: str) -> list[str]:
    """check_graph of the entry converted for `profile` as run_entry converts it."""
    model = load_model(entry)
    result = convert(model, fmt=detect_format(model), target=profile, **convert_options(entry))
    return summary(check_graph(result.graph, load_target(profile)))


def test_subset_and_profiles() -> None:
    assert set(PROFILES) == set(known_targets())
    assert set(ENTRIES) == set(SUBSET)
    assert not any(e.slow for e in ENTRIES.values())


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", SUBSET)
def test_converts_and_validates_under_profile(name: str, profile: str) -> None:
    entry = ENTRIES[name]
    if entry.path is None:
        pytest.skip(entry.missing)
    assert _lowered_violations(entry, profile) == []
    result = run_entry(entry, target=profile)
    assert result.status == "pass", f"{name} under {profile}: {result.message}"
    assert result.unsupported == ()
