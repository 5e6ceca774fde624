"""The rotary-embedding layout shared by the graphs the importer builds
(`op_mappings/onnx/contrib/_attention_common.py`: x·C + x[perm]·S, one gather with
`rotary_perm`) and the ONNX lowering that recognises them
(`converter/runtimes/onnxruntime/lowering/group_query_attention.py`)."""

from __future__ import annotations

import numpy as np


def rotary_perm(head_size: int, rotary_dim: int, interleaved: bool) -> np.ndarray:
    """Index map (int32) of the rotated partner of each of `head_size` head elements: the
    two halves of the first `rotary_dim` swapped (rotate-half), or each even/odd pair swapped
    when `interleaved`; the tail beyond `rotary_dim` maps to itself."""
    half = rotary_dim // 2
    idx = np.arange(head_size)
    if interleaved:
        idx[:rotary_dim] = np.arange(rotary_dim) ^ 1
    else:
        idx[:half] = np.arange(half, rotary_dim)
        idx[half:rotary_dim] = np.arange(half)
    return idx.astype(np.int32)
