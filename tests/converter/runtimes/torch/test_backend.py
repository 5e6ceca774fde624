"""The "torch" backend object and executor (converter/runtimes/torch/__init__.py): options and
errors, compile-once, output ownership, data types, float16 policy, torch.compile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from converter.core.webnn import ML, MLGraphBuilder  # noqa: E402
from converter.core.webnn.errors import MLNotSupportedError, MLOperationError  # noqa: E402
from converter.runtimes import get_backend  # noqa: E402
from converter.runtimes.torch.registry import IMPLS  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402


def test_backend_options() -> None:
    backend = get_backend("torch", "cpu", threads=2)
    assert backend.name == "torch"
    assert get_backend("torch", "cpu", compile="eager").name != "torch"
    with pytest.raises(ValueError, match="threads"):
        get_backend("torch", "cpu", threads=0)
    with pytest.raises(ValueError, match="threads, compile and cuda_graphs"):
        get_backend("torch", "cpu", fast=True)
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        get_backend("torch", "npu")
    with pytest.raises(ValueError, match="cuda_graphs"):
        get_backend("torch", "cpu", cuda_graphs=True)
    with pytest.raises(ValueError, match="compile"):
        get_backend("torch", "cpu", compile=3)


def test_cuda_unavailable_is_a_clear_error() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(ValueError, match="cuda"):
        get_backend("torch", "cuda")
    with pytest.raises(MLNotSupportedError, match="cuda"):
        ML().create_context(backend="torch", device="cuda")


def test_without_torch_the_factory_says_what_to_install() -> None:
    code = ("import sys; sys.modules['torch'] = None\n"
            "import converter.runtimes.torch\n"
            "from converter.runtimes import get_backend\n"
            "try:\n"
            "    get_backend('torch')\n"
            "except ValueError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[4])
    assert "pip install -e '.[torch]'" in out.stdout  # from the checkout's root


def test_compiled_once_and_reused() -> None:
    ctx = ML().create_context(backend="torch")
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2, 3], data_type="float32")
    graph = b.build({"y": b.relu(b.add(x, b.constant(np.ones((2, 3), np.float32))))})
    a = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    first = ctx.compute(graph, {"x": a})["y"]
    executable = graph._compiled["torch"]
    second = ctx.compute(graph, {"x": -a})["y"]
    assert graph._compiled["torch"] is executable
    np.testing.assert_array_equal(first, np.maximum(a + 1, 0))
    np.testing.assert_array_equal(second, np.maximum(1 - a, 0))


def test_threads_option_is_scoped_to_the_run() -> None:
    before = torch.get_num_threads()
    ctx = ML().create_context(backend="torch", threads=1)
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[4], data_type="float32")
    graph = b.build({"y": b.neg(x)})
    out = ctx.compute(graph, {"x": np.arange(4, dtype=np.float32)})["y"]
    np.testing.assert_array_equal(out, -np.arange(4, dtype=np.float32))
    assert torch.get_num_threads() == before


def test_missing_implementation_names_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(IMPLS, "softsign")
    ctx = ML().create_context(backend="torch")
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2], data_type="float32")
    graph = b.build({"y": b.softsign(x)})
    with pytest.raises(MLOperationError, match="softsign"):
        ctx.compute(graph, {"x": np.zeros(2, np.float32)})


def test_outputs_own_their_memory() -> None:
    """Outputs that are (views of) inputs, constants or each other are fresh, writable
    arrays, and writing to them changes nothing for the next run."""
    ctx = ML().create_context(backend="torch")
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2, 3], data_type="float32")
    c = b.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    r = b.reshape(x, [3, 2])
    twice = b.relu(x)
    graph = b.build({"a": b.identity(x), "b": r, "c": b.transpose(c), "d": b.reshape(c, [6]),
                     "e": b.slice(x, [0, 1], [2, 2]), "f": b.reshape(r, [6]), "g": twice,
                     "h": twice})
    feed = np.ones((2, 3), np.float32)
    out = ctx.compute(graph, {"x": feed})
    arrays = list(out.values()) + [feed]
    for i, a in enumerate(arrays):
        for other in arrays[i + 1:]:
            assert not np.shares_memory(a, other)
    for a in out.values():
        assert a.flags.writeable and a.flags.c_contiguous
        a[...] = 42
    again = ctx.compute(graph, {"x": feed})
    np.testing.assert_array_equal(feed, 1)
    np.testing.assert_array_equal(again["c"], np.arange(6, dtype=np.float32).reshape(2, 3).T)
    np.testing.assert_array_equal(again["d"], np.arange(6, dtype=np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8", "int32", "uint32",
                                   "int64", "uint64"])
def test_every_data_type_round_trips(dtype: str) -> None:
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    values = np.array([info.min, info.max, 0, 1], dtype=dtype).reshape(2, 2)

    def build(b: MLGraphBuilder, o: dict) -> dict:
        k = b.constant(values)
        return {"x": b.reshape(o["x"], [4]), "k": b.transpose(k), "both": b.concat([o["x"], k], 0)}

    out = compare({"x": values}, build)
    np.testing.assert_array_equal(out["x"], values.ravel())
    assert out["both"].dtype == np.dtype(dtype)


def test_float16_is_rounded_after_every_op_on_the_cpu() -> None:
    """300 * 300 overflows float16 (inf) before the division, as in the reference backend,
    although float32 intermediates would hold 90000."""
    def build(b: MLGraphBuilder, o: dict) -> dict:
        return {"y": b.div(b.mul(o["x"], o["x"]), o["x"])}

    out = compare({"x": np.full((3,), 300, np.float16)}, build)
    assert np.isinf(out["y"]).all()


def test_scalars_and_constant_only_graphs() -> None:
    def build(b: MLGraphBuilder, o: dict) -> dict:
        k = b.constant(np.array(2.5, np.float32))
        return {"s": b.mul(o["x"], k), "k": b.exp(k)}

    compare({"x": np.array(-1.5, np.float32)}, build)


def test_torch_compile_eager_backend() -> None:
    """compile= runs the call list through torch.compile ("eager" keeps the test fast)."""
    pytest.importorskip("torch._dynamo")
    w = rand((4, 3, 3, 3))

    def build(b: MLGraphBuilder, o: dict) -> dict:
        y = b.conv2d(o["x"], b.constant(w), padding=[1, 1, 0, 2])
        return {"y": b.softmax(b.relu(y), 1), "z": b.reduce_sum(y, axes=[2, 3])}

    compare({"x": rand((1, 3, 6, 6))}, build, compile="eager")


@pytest.mark.slow
def test_torch_compile_inductor() -> None:
    """compile=True (the inductor compiler): tens of seconds, so only in the slow suite."""
    w = rand((4, 5))

    def build(b: MLGraphBuilder, o: dict) -> dict:
        return {"y": b.gelu(b.matmul(o["a"], b.constant(w)))}

    compare({"a": rand((3, 4))}, build, compile=True)


def test_dispatch_with_ml_tensors() -> None:
    ctx = ML().create_context(backend="torch")
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[3], data_type="uint64")
    graph = b.build({"y": b.add(x, x)})
    tx = ctx.create_tensor([3], "uint64", writable=True)
    ty = ctx.create_tensor([3], "uint64", readable=True)
    ctx.write_tensor(tx, np.array([1, 2**63, 2**64 - 1], np.uint64))
    ctx.dispatch(graph, {"x": tx}, {"y": ty})
    np.testing.assert_array_equal(ctx.read_tensor(ty),
                                  np.array([2, 0, 2**64 - 2], np.uint64))
