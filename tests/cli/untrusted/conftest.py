"""Fixtures of the untrusted-input CLI tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cli.models import tiny_cnn
from tests.cli.untrusted.cli_run import IMAGE


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny CNN with `image.npz` (its input) beside it, made once per module."""
    d = tmp_path_factory.mktemp("untrusted")
    path = tiny_cnn(d / "tiny.onnx")
    np.savez(d / "image.npz", image=IMAGE)
    return path
