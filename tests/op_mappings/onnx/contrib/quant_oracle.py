"""Test helpers for the quantized contrib handlers: bit packing as onnxruntime expects it,
models with extra initializers, and a standard-op oracle runner.

`run_compare(model, feeds, expected, label, ...)` converts `model` and compares with
`expected` on each named backend (printing `MAXERR <label> <err>` like `oracle.compare`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

import converter
from converter.frontends.onnx.tensors import onnx_elem_type
from tests.op_mappings.onnx.contrib.oracle import compare
from tests.op_mappings.onnx.harness import IR_VERSION

MS = "com.microsoft"


def pack_bits(values: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned `bits`-wide values packed along the last axis into uint8, the first value in
    the lowest bits (the last axis is zero-padded to whole bytes)."""
    per = 8 // bits
    v = np.asarray(values).astype(np.uint16)
    pad = (-v.shape[-1]) % per
    if pad:
        v = np.concatenate([v, np.zeros((*v.shape[:-1], pad), np.uint16)], axis=-1)
    v = v.reshape(*v.shape[:-1], -1, per)
    out = np.zeros(v.shape[:-1], np.uint16)
    for i in range(per):
        out |= v[..., i] << (bits * i)
    return out.astype(np.uint8)


def model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, np.ndarray],
          initializers: Mapping[str, np.ndarray], outputs: Sequence[str] = ("y",),
          opset: int = 21) -> onnx.ModelProto:
    """A model of `nodes` with graph inputs `inputs` and `initializers` (com.microsoft opset 1
    imported)."""
    graph = helper.make_graph(
        list(nodes), "g",
        [helper.make_tensor_value_info(n, onnx_elem_type(a.dtype.name), list(a.shape))
         for n, a in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                   helper.make_opsetid(MS, 1)],
                             ir_version=IR_VERSION)


def run_compare(m: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
                expected: Mapping[str, np.ndarray], label: str, rtol: float, atol: float,
                backends: Sequence[str] = ("reference",), **kw: Any
                ) -> converter.ConversionResult:
    """`oracle.compare` on each backend; returns the reference conversion."""
    result = None
    for backend in backends:
        res = compare(m, feeds, expected, f"{label}@{backend}", rtol, atol, backend=backend,
                      **kw)
        result = result or res
    assert result is not None
    return result
