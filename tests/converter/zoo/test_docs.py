"""What models/README.md and converter/zoo/models/zoo.toml say about the Silero VAD models is what the CLI
does: `silero_vad.onnx` converts only with `--pin sr=...` (every zoo entry of that file pins
it, the README says so and its commands work), and silero-vad is not a pyproject extra."""

from __future__ import annotations

import importlib.util
import re
import shlex
import tomllib
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from cli.main import cli
from tests.cli.models import ROOT

HAS_SILERO = importlib.util.find_spec("silero_vad") is not None
needs_silero = pytest.mark.skipif(not HAS_SILERO, reason="silero-vad is not installed")


def _data() -> Path:
    spec = importlib.util.find_spec("silero_vad")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "data"


def test_manifest_pins_sr_wherever_the_readme_says_it_is_needed() -> None:
    manifest = tomllib.loads((ROOT / "converter" / "zoo" / "models" / "zoo.toml").read_text(encoding="utf-8"))
    plain = [m for m in manifest["model"]
             if m.get("source", "").endswith("silero_vad/data/silero_vad.onnx")]
    assert {m["name"] for m in plain} == {"silero_vad_16k", "silero_vad_8k"}
    assert {m["pins"]["sr"]["value"] for m in plain} == {16000, 8000}
    readme = (ROOT / "models" / "README.md").read_text(encoding="utf-8")
    text = " ".join(readme.split())
    assert "It needs `--pin sr=16000` (or `sr=8000`)" in text
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = " ".join(" ".join(v) for v in pyproject["project"]["optional-dependencies"].values())
    if "silero" not in extras:  # then nothing may claim it is one
        assert "is in the `test` extra" not in text
        assert "a test extra in pyproject.toml" not in (ROOT / "converter" / "zoo" / "models" / "zoo.toml").read_text()


@needs_silero
def test_silero_vad_converts_only_with_the_pin(tmp_path: Path) -> None:
    model = _data() / "silero_vad.onnx"
    shapes = ["--shape", "input=1,512", "--shape", "state=2,1,128"]
    r = CliRunner().invoke(cli, ["convert", str(model), *shapes, "-o", str(tmp_path / "a")])
    assert r.exit_code == 2 and "--pin sr=" in r.stderr and "Traceback" not in r.output
    assert not (tmp_path / "a").exists()
    r = CliRunner().invoke(cli, ["convert", str(model), *shapes, "--pin", "sr=16000", "-o",
                                 str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    # The pinned graph computes what onnxruntime computes with sr = 16000.
    rng = np.random.default_rng(0)
    feeds = {"input": (rng.normal(size=(1, 512)) * 0.1).astype(np.float32),
             "state": np.zeros((2, 1, 128), np.float32)}
    np.savez(tmp_path / "in.npz", **feeds)
    r = CliRunner().invoke(cli, ["run", str(tmp_path / "b"), "--inputs",
                                 str(tmp_path / "in.npz"), "-o", str(tmp_path / "o.npz")])
    assert r.exit_code == 0, r.output
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    expected = sess.run(None, {**feeds, "sr": np.array(16000, np.int64)})
    with np.load(tmp_path / "o.npz") as got:
        np.testing.assert_allclose(got["output"], expected[0], atol=1e-5)
        np.testing.assert_allclose(got["stateN"], expected[1], atol=1e-4)


@needs_silero
def test_the_readme_silero_commands_work(tmp_path: Path) -> None:
    readme = (ROOT / "models" / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Converting the Silero models yourself", 1)[1]
    block = block.split("```bash", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    commands = [shlex.split(line.replace('"$D', f'"{_data()}'))
                for line in block.splitlines() if line.startswith("webnn-convert")]
    assert len(commands) == 2
    for argv in commands:
        args = [a if not re.fullmatch(r"\w+_webnn", a) else str(tmp_path / a)
                for a in argv[1:]]
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, (argv, r.output)
