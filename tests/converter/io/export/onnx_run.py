"""Test helpers for the ONNX lowering's re-fusion tests (test_onnx_contrib_*.py,
test_onnx_float16_chains.py): run an ONNX model in onnxruntime (one thread, CPU provider,
warnings off) and count a model's operators."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import onnx
import onnxruntime as ort


def run_onnx(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Every output of `model` on `feeds`, in graph output order."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return [np.asarray(r) for r in session.run(None, dict(feeds))]


def op_counts(model: onnx.ModelProto) -> Counter[str]:
    """How many nodes of each op type the main graph holds."""
    return Counter(n.op_type for n in model.graph.node)
