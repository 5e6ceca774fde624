"""The fuzzer's seed corpus, built once for the session (tools/fuzz/seeds.py)."""

from __future__ import annotations

import pytest

from tools.fuzz import seeds


@pytest.fixture(scope="session")
def corpus() -> list[seeds.Seed]:
    return seeds.corpus()
