"""Torch implementations: batchNormalization, instanceNormalization, layerNormalization
(mirrors the reference kernels/normalization.py).

Computed in float32 (float16 inputs too, also on CUDA); `epsilon` is first cast to the input
data type, as the spec requires. Variances are population variances. torch's fused kernels
are used where they compute exactly the spec formula: `F.batch_norm` (inference) for
batchNormalization along axis 1 of a rank >= 2 input, and `F.layer_norm` for
layerNormalization over the trailing axes in increasing order; otherwise the formula is
computed from the centred values (mean of squared deviations).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from converter.core.webnn.dtypes import cast_number
from converter.runtimes.torch.registry import Fn, Node, along, impl


def _epsilon(node: Node) -> float:
    return float(cast_number(node.options["epsilon"], node.out_type))


def _normalize(x: torch.Tensor, axes: list[int], epsilon: float) -> torch.Tensor:
    if not axes:
        return (x - x) / torch.sqrt(torch.zeros_like(x) + epsilon)
    centered = x - torch.mean(x, dim=axes, keepdim=True)
    var = torch.mean(centered * centered, dim=axes, keepdim=True)
    return centered / torch.sqrt(var + epsilon)


@impl("batchNormalization")
def batch_normalization(node: Node) -> Fn:
    axis, eps, fl = int(node.options["axis"]), _epsilon(node), node.acc
    rank = node.operand(0).rank
    scale, bias = node.opt("scale"), node.opt("bias")

    if axis == 1 and rank >= 2:
        def fused(*t: torch.Tensor) -> list[torch.Tensor]:
            return [F.batch_norm(fl(t[0]), fl(t[1]), fl(t[2]),
                                 fl(t[scale]) if scale is not None else None,
                                 fl(t[bias]) if bias is not None else None, False, 0.0, eps)]

        return fused

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        x = fl(t[0])
        mean, var = along(fl(t[1]), rank, axis), along(fl(t[2]), rank, axis)
        y = (x - mean) / torch.sqrt(var + eps)
        if scale is not None:
            y = y * along(fl(t[scale]), rank, axis)
        if bias is not None:
            y = y + along(fl(t[bias]), rank, axis)
        return [y]

    return fn


@impl("instanceNormalization")
def instance_normalization(node: Node) -> Fn:
    eps, fl = _epsilon(node), node.acc
    spatial, channel = ([2, 3], 1) if node.options["layout"] == "nchw" else ([1, 2], 3)
    scale, bias = node.opt("scale"), node.opt("bias")

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        y = _normalize(fl(t[0]), spatial, eps)
        if scale is not None:
            y = y * along(fl(t[scale]), 4, channel)
        if bias is not None:
            y = y + along(fl(t[bias]), 4, channel)
        return [y]

    return fn


def _reduced_layout(shape: Sequence[int], axes: Sequence[int]
                    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Permutation and target shape placing scale/bias (dims in `axes` order) to broadcast
    against a tensor of `shape`."""
    order = tuple(int(i) for i in np.argsort(axes, kind="stable"))
    target = [1] * len(shape)
    for a in axes:
        target[a] = shape[a]
    return order, tuple(target)


@impl("layerNormalization")
def layer_normalization(node: Node) -> Fn:
    axes = [int(a) for a in node.options["axes"]]
    eps, fl = _epsilon(node), node.acc
    shape = node.operand(0).shape
    order, target = _reduced_layout(shape, axes)
    scale, bias = node.opt("scale"), node.opt("bias")
    rank = len(shape)
    if axes and axes == list(range(rank - len(axes), rank)):
        normalized = tuple(shape[a] for a in axes)

        def fused(*t: torch.Tensor) -> list[torch.Tensor]:
            return [F.layer_norm(fl(t[0]), normalized,
                                 fl(t[scale]) if scale is not None else None,
                                 fl(t[bias]) if bias is not None else None, eps)]

        return fused

    def place(p: torch.Tensor) -> torch.Tensor:
        return fl(p).permute(order).reshape(target)

    def fn(*t: torch.Tensor) -> list[torch.Tensor]:
        y = _normalize(fl(t[0]), axes, eps)
        if scale is not None:
            y = y * place(t[scale])
        if bias is not None:
            y = y + place(t[bias])
        return [y]

    return fn
