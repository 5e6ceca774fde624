"""Helpers shared by the ONNX and TFLite handlers (no handlers here).

- `recurrent_layout`: gate layouts of recurrent ops (which gate sits where in packed
  weights, the WebNN layout name of each order), direction names and cell activations.
- `unroll`: the time-step unroller of recurrent ops decomposed from primitives.
- `values`: small conversions of constant inputs (ints, axes, scalars).
- `padding`: "same" padding (TFLite SAME, ONNX SAME_UPPER / SAME_LOWER).

The op registries never import this package: discovery walks `op_mappings/onnx` and
`op_mappings/tflite` only, and skips every module and package whose name starts with "_".
"""
