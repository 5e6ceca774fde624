"""ONNX GridSample vs onnxruntime: every mode x padding_mode x align_corners on 2-D inputs
with grids reaching far outside [-1, 1] (several reflections), 3-D (volumetric) inputs,
opset 16 mode names, float16, and a grid that is a constant."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand

TOL = {"rtol": 1e-4, "atol": 1e-5}


def _grid(n: int, *out: int, dims: int = 2, seed: int = 0, spread: float = 2.6) -> np.ndarray:
    g = rand(n, *out, dims, seed=seed, low=-spread, high=spread)
    # exact cell centres/corners and ties for nearest rounding
    g.reshape(-1)[:6] = [-1.0, 1.0, 0.0, -0.5, 0.5, 0.2]
    return g


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_grid_sample_2d(mode: str, padding: str, align: int) -> None:
    x = rand(2, 3, 5, 4, seed=1)
    check_node("GridSample", [("x", x), ("g", _grid(2, 6, 7, seed=2))],
               {"mode": mode, "padding_mode": padding, "align_corners": align}, opset=20,
               **TOL)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_grid_sample_3d(mode: str, padding: str, align: int) -> None:
    x = rand(1, 2, 3, 4, 5, seed=3)
    check_node("GridSample", [("x", x), ("g", _grid(1, 2, 3, 4, dims=3, seed=4))],
               {"mode": mode, "padding_mode": padding, "align_corners": align}, opset=20,
               **TOL)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_opset16_names(mode: str) -> None:
    x = rand(1, 2, 4, 4, seed=5)
    check_node("GridSample", [("x", x), ("g", _grid(1, 3, 3, seed=6, spread=1.2))],
               {"mode": mode}, opset=16, **TOL)


def test_grid_sample_constant_grid_and_float16() -> None:
    x = rand(1, 2, 4, 6, seed=7)
    g = _grid(1, 3, 5, seed=8, spread=1.1)
    check_node("GridSample", [("x", x), ("g", g)], {"padding_mode": "border"}, opset=20,
               constants=("g",), **TOL)
    check_node("GridSample", [("x", x.astype(np.float16)), ("g", g.astype(np.float16))],
               {"mode": "cubic"}, opset=20, rtol=1e-2, atol=1e-2)


def test_grid_sample_single_cell_axis() -> None:
    """A size-1 axis with align_corners (reflection range 0)."""
    x = rand(1, 1, 1, 5, seed=9)
    for padding in ("reflection", "border", "zeros"):
        check_node("GridSample", [("x", x), ("g", _grid(1, 2, 3, seed=10))],
                   {"padding_mode": padding, "align_corners": 1}, opset=20, **TOL)
