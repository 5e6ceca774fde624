"""The ONNX front end: reader (`reader`), function/subgraph expansion (`subgraph`), importer
hooks (`importer`), onnxruntime reference runs (`reference`) and `inspect` (`inspect`).
Registering costs no onnx import; `frontend` is the implementation module."""

from __future__ import annotations

from ..base import Frontend, register


def _sniff(head: bytes, suffix: str) -> bool:
    return suffix == ".onnx"


FRONTEND = register(Frontend(
    name="onnx", label="ONNX", reference="onnxruntime", version_unit="opset",
    suffixes=(".onnx",),
    options=frozenset({"free_dims", "input_dims", "input_shapes", "pin_inputs"}),
    handlers="op_mappings.onnx", module="converter.frontends.onnx.frontend", sniff=_sniff,
    fallback=True))
