"""com.microsoft (onnxruntime contrib) op handlers, discovered like the standard ones.

The `onnx` package has no schemas for these ops, so the reader fills no attribute defaults
for them: handlers read their attributes with the defaults of onnxruntime's contrib op
schemas (docs/ContribOperators.md, onnxruntime/core/graph/contrib_ops/*.cc). One module per
family; modules whose names start with "_" hold helpers and register nothing.
"""
