"""Shared pytest fixtures."""

from __future__ import annotations

import pytest

from converter.webnn import ML, MLContext, MLGraphBuilder


@pytest.fixture
def context() -> MLContext:
    return ML().create_context()


@pytest.fixture
def builder(context: MLContext) -> MLGraphBuilder:
    return MLGraphBuilder(context)
