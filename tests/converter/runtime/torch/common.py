"""Shared helpers of the torch backend tests: run one graph on the reference backend (the
oracle) and on the torch backend, and compare."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import converter.runtime.torch  # noqa: F401  (registers the "torch" backend)
from converter.webnn import ML, MLGraphBuilder, MLOperand

Build = Callable[[MLGraphBuilder, dict[str, MLOperand]], dict[str, MLOperand]]


def run(backend: str, inputs: dict[str, np.ndarray], build: Build, **options: Any
        ) -> dict[str, np.ndarray]:
    """Build the graph on a fresh context of `backend` and compute it on `inputs`."""
    ctx = ML().create_context(backend=backend, **options)
    b = MLGraphBuilder(ctx)
    ops = {name: b.input(name, shape=list(a.shape), data_type=a.dtype.name)
           for name, a in inputs.items()}
    graph = b.build(build(b, ops))
    return ctx.compute(graph, inputs)


def ulp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between two float arrays of the same dtype."""
    bits = {2: np.int16, 4: np.int32}[a.dtype.itemsize]
    ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
    mask = 0x7FFF if a.dtype.itemsize == 2 else 0x7FFFFFFF
    ia = np.where(ia < 0, -(ia & mask), ia)
    ib = np.where(ib < 0, -(ib & mask), ib)
    return np.abs(ia - ib)


def compare(inputs: dict[str, np.ndarray], build: Build, f16_ulp: int = 2,
            rtol: float = 1e-5, atol: float = 1e-6, **options: Any) -> dict[str, np.ndarray]:
    """torch vs reference: integers exact, float32 within `rtol` relative (`atol` near zero),
    float16 within `f16_ulp` ULP; NaN and infinity positions equal. Returns torch's outputs."""
    want_all = run("reference", inputs, build)
    got_all = run("torch", inputs, build, **options)
    assert set(got_all) == set(want_all)
    for name, want in want_all.items():
        have = got_all[name]
        assert have.dtype == want.dtype, (name, have.dtype, want.dtype)
        assert have.shape == want.shape, (name, have.shape, want.shape)
        if want.dtype.kind != "f":
            np.testing.assert_array_equal(have, want, err_msg=name)
            continue
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(have), nan, err_msg=f"{name}: NaN positions")
        if want.dtype == np.float32:
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            worst = ulp(have[~nan], want[~nan]).max(initial=0)
            assert worst <= f16_ulp, f"{name}: {worst} ULP > {f16_ulp}"
    return got_all


RNG = np.random.default_rng(12)


def rand(shape: tuple[int, ...] | list[int], dtype: str = "float32", lo: float = -1.0,
         hi: float = 1.0) -> np.ndarray:
    """Uniform random floats in [lo, hi) or integers in [lo, hi] of `dtype`."""
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(lo, hi, size=shape).astype(dtype)
    return RNG.integers(int(lo), int(hi), size=shape, endpoint=True, dtype=np.dtype(dtype))
