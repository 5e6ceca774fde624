"""The README's Python example runs as written (in a temporary folder holding the generated
tiny CNN it converts), and its first set-up command names files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.search(r"## Python API\n\n```python\n(.*?)```", README, re.S)
    assert block, "README has no Python API example"
    monkeypatch.chdir(tmp_path)
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("make_tiny_cnn", ROOT / "models" / "make_tiny_cnn.py")
    assert spec and spec.loader
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make(str(tmp_path / "tiny_cnn.onnx"))
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)  # noqa: S102 - our own docs
    report = namespace["report"]
    assert report.passed  # type: ignore[attr-defined]
    assert (tmp_path / "out" / "model.webnn").is_file()
    assert (tmp_path / "out_json" / "model.webnn.json").is_file()


def test_first_command_uses_shipped_files() -> None:
    first = next(line for line in README.splitlines() if line.startswith("python3 -m venv"))
    for script in re.findall(r"python (models/\S+\.py)", first):
        assert (ROOT / script).is_file(), script
