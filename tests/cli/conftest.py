"""Fixtures of the command-line tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.models import tiny_cnn


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the tiny CNN (`tiny.onnx`), made once per module."""
    d = tmp_path_factory.mktemp("models")
    tiny_cnn(d / "tiny.onnx")
    return d


@pytest.fixture()
def tiny(model_dir: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny CNN in its own folder (outputs land beside it)."""
    path = tmp_path / "models" / "tiny.onnx"
    path.parent.mkdir()
    shutil.copy(model_dir / "tiny.onnx", path)
    return path
