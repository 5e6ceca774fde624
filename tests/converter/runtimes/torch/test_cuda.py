"""The torch backend on a CUDA device: the WPT cases without float16 data, float16 computed
natively, and CUDA-graph replay. Skipped when torch.cuda.is_available() is False (CI has no
GPU)."""

from __future__ import annotations

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
from tests.wpt import WptCase, check_case, expected_failure, load_cases  # noqa: E402

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
    w = rand((6, 3, 3, 3))
    for _ in range(3):  # a fresh graph per round; each is captured and replayed
        inputs = {"x": rand((2, 3, 8, 8), "float32", -4, 4), "bias": rand((6,))}
        compare(inputs, lambda b, o: _network(b, o, w), rtol=1e-5, atol=1e-5, device="cuda",
                cuda_graphs=True)


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
