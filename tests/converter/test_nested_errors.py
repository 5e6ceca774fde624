"""`nested_error` makes a new error for a failing subgraph or function body: the inner errors
it lists are never itself, also where `distributed` (the zoo's Dask engine) is imported, whose
tblib exception pickling makes `copy.copy` of an exception share the original's attributes."""

from __future__ import annotations

import pytest

from converter.core.errors import InvalidModel
from converter.importer import nested_error


def _chain_is_finite(err: InvalidModel) -> bool:
    seen: set[int] = set()
    todo = [err]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            return False
        seen.add(id(e))
        todo.extend(e.inner or ())
    return True


def _nested_twice() -> InvalidModel:
    inner = InvalidModel("LSTM X has rank 5, 3 expected")
    once = nested_error([inner], "in subgraph 'b'")
    twice = nested_error([once], "in subgraph 'a'")
    assert isinstance(twice, InvalidModel)
    return twice


def test_nested_errors_form_a_tree() -> None:
    twice = _nested_twice()
    assert _chain_is_finite(twice)
    assert twice.message.startswith("in subgraph 'a': in subgraph 'b': LSTM X has rank 5")
    assert twice.inner is not None and twice.inner[0].inner is not None


def test_nested_errors_form_a_tree_with_distributed_imported() -> None:
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    twice = _nested_twice()
    assert _chain_is_finite(twice)
