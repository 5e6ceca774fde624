"""The torch backend on a CUDA device: the WPT cases without float16 data (run once, eagerly,
and replayed as a captured CUDA graph, the default from the second call), float16 computed
natively, and CUDA-graph replay with new inputs. Skipped when torch.cuda.is_available() is
False (CI has no GPU)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from converter.runtimes import get_backend, register_backend  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand, run  # noqa: E402
from tests.converter.runtimes.torch.test_wpt import XFAIL  # noqa: E402
from tests.wpt import (  # noqa: E402
    WptCase,
    build_graph,
    check_case,
    check_outputs,
    expected_failure,
    load_cases,
)

Ops = dict[str, MLOperand]


def _uses_float16(case: dict[str, Any]) -> bool:
    graph = case["graph"]
    descs = [v["descriptor"] for v in (*graph["inputs"].values(),
                                        *graph["expectedOutputs"].values())]
    return any(d["dataType"] == "float16" for d in descs) or "float16" in repr(
        graph["operators"])


CASES = [c for c in load_cases() if not _uses_float16(c.case)]


@pytest.fixture(scope="module", autouse=True)
def _cuda_alias() -> Iterator[None]:
    """`tests.wpt` creates contexts by backend name only: register "torch-cuda"."""
    register_backend("torch-cuda", lambda device, **o: get_backend("torch", "cuda", **o))
    yield


@pytest.mark.parametrize("wpt", CASES, ids=[c.id for c in CASES])
def test_wpt_case_on_cuda(wpt: WptCase) -> None:
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    if reason := expected_failure(wpt, "torch") or XFAIL.get(wpt.id):
        pytest.xfail(reason)
    check_case(wpt.case, backend="torch-cuda")


@pytest.mark.parametrize("wpt", CASES, ids=[c.id for c in CASES])
def test_wpt_case_replayed_as_a_cuda_graph(wpt: WptCase) -> None:
    """The third call of one compiled graph: the first ran eagerly, the second captured the
    CUDA graph, the third replays it."""
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    if reason := expected_failure(wpt, "torch") or XFAIL.get(wpt.id):
        pytest.xfail(reason)
    from converter.core.webnn import ML

    ctx = ML().create_context(backend="torch", device="cuda")
    graph, feeds = build_graph(wpt.case, ctx)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the default replays, or falls
        warnings.simplefilter("error", UserWarning)  # back to eager, silently
        for _ in range(3):
            outputs = ctx.compute(graph, feeds)
    check_outputs(wpt.case, outputs)


def test_cuda_graphs_are_the_default_on_cuda_only() -> None:
    def graphs(device: str, **options: Any) -> object:
        return getattr(get_backend("torch", device, **options), "cuda_graphs", None)

    assert graphs("cuda") is True
    assert graphs("cuda", cuda_graphs=False) is False
    assert graphs("cpu") is False


def _network(b: MLGraphBuilder, o: Ops, w: np.ndarray) -> Ops:
    y = b.conv2d(o["x"], b.constant(w), padding=[1, 1, 1, 1], bias=o["bias"])
    y = b.max_pool2d(b.relu(y), window_dimensions=[2, 2], strides=[2, 2])
    z = b.reduce_mean(y, axes=[2, 3])
    return {"y": y, "z": b.softmax(z, 1), "id": b.identity(o["x"]),
            "i": b.cast(b.mul(b.cast(o["x"], "int32"), b.constant(np.array(3, np.int32))),
                        "uint64")}


def test_float32_network_matches_the_reference() -> None:
    w = rand((6, 3, 3, 3))
    inputs = {"x": rand((2, 3, 8, 8), "float32", -4, 4), "bias": rand((6,))}
    compare(inputs, lambda b, o: _network(b, o, w), rtol=1e-5, atol=1e-5, device="cuda")


def test_float16_runs_natively() -> None:
    w = rand((6, 3, 3, 3), "float16")
    inputs = {"x": rand((2, 3, 8, 8), "float16", -4, 4), "bias": rand((6,), "float16")}
    want = run("reference", inputs, lambda b, o: _network(b, o, w))
    got = run("torch", inputs, lambda b, o: _network(b, o, w), device="cuda")
    for name, expected in want.items():
        assert got[name].dtype == expected.dtype
        np.testing.assert_allclose(got[name].astype(np.float64), expected.astype(np.float64),
                                   rtol=1e-2, atol=1e-2, err_msg=name)


def test_cuda_graphs_replay_with_new_inputs() -> None:
    """One compiled graph, four calls with new inputs (eager, capture, replay, replay), each
    against the reference backend."""
    from converter.core.webnn import ML

    w = rand((6, 3, 3, 3))
    shapes = {"x": (2, 3, 8, 8), "bias": (6,)}

    def build(ctx: Any) -> Any:
        b = MLGraphBuilder(ctx)
        ops = {n: b.input(n, shape=list(s), data_type="float32") for n, s in shapes.items()}
        return b.build(_network(b, ops, w))

    cuda = ML().create_context(backend="torch", device="cuda")
    ref = ML().create_context(backend="reference")
    graph, ref_graph = build(cuda), build(ref)
    for _ in range(4):
        inputs = {"x": rand((2, 3, 8, 8), "float32", -4, 4), "bias": rand((6,))}
        got, want = cuda.compute(graph, inputs), ref.compute(ref_graph, inputs)
        for name, expected in want.items():
            if expected.dtype.kind == "f":
                np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-5,
                                           err_msg=name)
            else:
                np.testing.assert_array_equal(got[name], expected, err_msg=name)


def test_cuda_graph_executable_reused() -> None:
    from converter.core.webnn import ML

    ctx = ML().create_context(backend="torch", device="cuda", cuda_graphs=True)
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[4, 5], data_type="float32")
    graph = b.build({"y": b.tanh(b.matmul(x, b.constant(np.eye(5, dtype=np.float32))))})
    for k in range(3):
        a = rand((4, 5), "float32", -2, 2) * (k + 1)
        np.testing.assert_allclose(ctx.compute(graph, {"x": a})["y"], np.tanh(a), rtol=1e-6,
                                   atol=1e-6)


def _zoo_params() -> list[Any]:
    from converter.zoo import default_manifests, read_manifests

    return [pytest.param(e, id=e.name) for e in read_manifests(default_manifests())]


@pytest.mark.parametrize("entry", _zoo_params())
def test_zoo_model_on_cuda(entry: Any) -> None:
    """Every zoo model (slow ones too: a GPU run is rare) on the torch backend on CUDA
    matches the original framework exactly as `webnn-convert zoo --backend torch --device
    cuda` checks it."""
    from converter.zoo import run_entry

    if entry.path is None:
        pytest.skip(entry.missing)
    result = run_entry(entry, backend="torch", device="cuda")
    assert result.status == "pass", f"{entry.name}: {result.message} {result.outputs}"
