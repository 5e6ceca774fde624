"""The onnxruntime backend's tests run single-threaded sessions (`DEFAULT_THREADS = 1`):
thread-pool start-up dominates the cost of the many tiny graphs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import converter.runtimes.onnxruntime.backend as ort_backend


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    saved = ort_backend.DEFAULT_THREADS
    ort_backend.DEFAULT_THREADS = 1
    yield
    ort_backend.DEFAULT_THREADS = saved
