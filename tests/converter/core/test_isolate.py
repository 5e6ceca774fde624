"""`converter.core.isolate.isolated`: a function run in a forked child gives back its result or
its exception; a child that dies (abort, SIGSEGV, an exit without a result) is one
`NativeCrash` line naming the framework, the model and the signal. Oracles: the process ids
(the function ran elsewhere), numpy's own arrays, the signal the child was sent."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from converter.core import isolate
from converter.core.errors import InvalidModel, ReferenceFailed
from converter.core.isolate import NativeCrash, isolated

pytestmark = pytest.mark.skipif(not isolate.can_isolate(), reason="no os.fork here")


def _crash(message: str) -> str:
    text = str(message)
    assert "\n" not in text
    return text


def test_result_comes_back_from_another_process() -> None:
    arrays: dict[str, np.ndarray] = {"a": np.arange(12, dtype=np.float32).reshape(3, 4),
                                      "b": np.array([1, -2], dtype=np.int8)}

    def doubled() -> tuple[int, dict[str, np.ndarray]]:
        return os.getpid(), {k: v * 2 for k, v in arrays.items()}

    pid, got = isolated(doubled, framework="LiteRT", label="m/x.tflite")
    assert pid != os.getpid()
    for key, value in arrays.items():
        np.testing.assert_array_equal(got[key], value * 2)
        assert got[key].dtype == value.dtype


def test_an_exception_is_raised_here() -> None:
    def fails() -> None:
        raise InvalidModel("node 'n' (Add): something is wrong")

    with pytest.raises(InvalidModel, match="something is wrong"):
        isolated(fails, framework="LiteRT", label="m/x.tflite")


def test_an_exception_that_does_not_pickle() -> None:
    class Odd(Exception):
        def __init__(self, *, why: str) -> None:
            super().__init__(why)

    def fails() -> None:
        raise Odd(why="no positional arguments")

    with pytest.raises(ReferenceFailed) as info:
        isolated(fails, framework="onnxruntime", label="m.onnx")
    assert str(info.value) == ("onnxruntime failed running m.onnx: Odd: no positional "
                               "arguments")


@pytest.mark.parametrize("how,name", [
    (lambda: os.abort(), "SIGABRT"),
    (lambda: os.kill(os.getpid(), signal.SIGSEGV), "SIGSEGV"),
    (lambda: os._exit(3), "exit code 3"),
])
def test_a_dying_child_is_one_clean_error(how: object, name: str) -> None:
    with pytest.raises(NativeCrash) as info:
        isolated(how, framework="LiteRT", label="m/x.tflite")  # type: ignore[arg-type]
    assert _crash(str(info.value)) == (f"LiteRT crashed running m/x.tflite ({name}): the "
                                       "model is malformed or hits a LiteRT bug")
    assert info.value.reason_code == "reference_failed"


def test_the_parent_goes_on_after_a_crash() -> None:
    with pytest.raises(NativeCrash):
        isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV), framework="LiteRT",
                 label="m")
    assert isolated(lambda: 41 + 1, framework="LiteRT", label="m") == 42


def test_without_fork_the_function_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolate, "can_isolate", lambda: False)
    assert isolated(os.getpid, framework="LiteRT", label="m") == os.getpid()
