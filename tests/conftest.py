"""Shared pytest fixtures."""

from __future__ import annotations

import signal

import pytest

from converter.core.webnn import ML, MLContext, MLGraphBuilder


def pytest_configure(config: pytest.Config) -> None:
    """Signals as in a terminal, whatever started the run: a shell running pytest in the
    background (`pytest &`, `nohup`) starts it with SIGINT ignored, and every CLI process a
    test spawns would inherit that, so the tests that interrupt one (or this process) could
    not. A handler set here is reset to the default in the children they spawn."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture
def context() -> MLContext:
    return ML().create_context()


@pytest.fixture
def builder(context: MLContext) -> MLGraphBuilder:
    return MLGraphBuilder(context)
