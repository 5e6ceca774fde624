"""Reference kernels: batchNormalization, instanceNormalization, layerNormalization.

Computed in float64 from the spec formulas; `epsilon` is first cast to the input data type,
as the spec requires. Variances are population variances (divide by the element count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.webnn.dtypes import cast_number
from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import f64, kernel


def _epsilon(op: Operation, options: dict[str, Any]) -> float:
    return float(cast_number(options["epsilon"], op.outputs[0].data_type))


def _along(p: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A 1-D per-channel array reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = p.shape[0]
    return f64(p).reshape(shape)


def _normalize(x: np.ndarray, axes: tuple[int, ...], epsilon: float) -> np.ndarray:
    mean = np.mean(x, axis=axes, keepdims=True) if axes else x
    centered = x - mean
    var = np.mean(centered * centered, axis=axes, keepdims=True) if axes else np.zeros_like(x)
    return centered / np.sqrt(var + epsilon)


@kernel("batchNormalization")
def batch_normalization(op: Operation, args: list[Any], options: dict[str, Any]
                        ) -> list[np.ndarray]:
    x = f64(args[0])
    axis = int(options["axis"])
    mean = _along(args[1], x.ndim, axis)
    var = _along(args[2], x.ndim, axis)
    with np.errstate(all="ignore"):
        y = (x - mean) / np.sqrt(var + _epsilon(op, options))
        if "scale" in options:
            y = y * _along(options["scale"], x.ndim, axis)
        if "bias" in options:
            y = y + _along(options["bias"], x.ndim, axis)
    return [y]


@kernel("instanceNormalization")
def instance_normalization(op: Operation, args: list[Any], options: dict[str, Any]
                           ) -> list[np.ndarray]:
    x = f64(args[0])
    nchw = options["layout"] == "nchw"
    spatial, channel = ((2, 3), 1) if nchw else ((1, 2), 3)
    with np.errstate(all="ignore"):
        y = _normalize(x, spatial, _epsilon(op, options))
        if "scale" in options:
            y = y * _along(options["scale"], 4, channel)
        if "bias" in options:
            y = y + _along(options["bias"], 4, channel)
    return [y]


def _reduced_layout(p: np.ndarray, shape: Sequence[int], axes: Sequence[int]) -> np.ndarray:
    """scale/bias (dims in `axes` order) placed to broadcast against a tensor of `shape`."""
    order = np.argsort(axes, kind="stable")
    target = [1] * len(shape)
    for a in axes:
        target[a] = shape[a]
    return np.transpose(f64(p), order).reshape(target)


@kernel("layerNormalization")
def layer_normalization(op: Operation, args: list[Any], options: dict[str, Any]
                        ) -> list[np.ndarray]:
    x = f64(args[0])
    axes = tuple(int(a) for a in options["axes"])
    with np.errstate(all="ignore"):
        y = _normalize(x, axes, _epsilon(op, options))
        if "scale" in options:
            y = y * _reduced_layout(options["scale"], x.shape, axes)
        if "bias" in options:
            y = y + _reduced_layout(options["bias"], x.shape, axes)
    return [y]
