"""Exporters: write an MLGraph in formats other tools read.

`converter.export.onnx.to_onnx(graph)` lowers a WebNN graph to a standard ONNX model.
Submodules are imported on demand so that exporting to one format never requires the
libraries of another.
"""
