"""`convert_tflite()`: a `.tflite` model -> a WebNN `MLGraph` plus a conversion report.

```python
from converter.api_tflite import convert_tflite
result = convert_tflite("model.tflite")                 # main subgraph, tensor names
result = convert_tflite("model.tflite", signature="serving_default")  # signature aliases
outputs = result.run({"serving_default_x:0": image})
```

Inputs/outputs are keyed by the tensor names LiteRT's `get_input_details()` /
`get_output_details()` report, or by the SignatureDef aliases when `signature` is given; the
order is the subgraph's. int8/uint8 quantized graph inputs and outputs stay int8/uint8.

Restrictions: dynamic (-1) input dimensions must be fixed with `input_shapes`; control flow,
state and dynamic-shape builtins are not supported (see op_mappings/tflite/).
`fold_fp16=True` folds float16 weights behind DEQUANTIZE into float32 constants instead of
keeping float16 constants and a cast.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .api import ConversionResult
from .errors import ConversionError, UnsupportedOp
from .formats.onnx import Node
from .formats.tflite import TFLiteSourceGraph, read_tflite
from .importer import Importer
from .webnn import MLContext

_HINT = "add a handler in op_mappings/tflite/, or replace the op in the source model"


class TFLiteImporter(Importer):
    """The shared importer loop with TFLite handler lookup and TFLite wording in errors."""

    def _no_handler_message(self, node: Node) -> str:
        from op_mappings.tflite import handlers

        sinces = sorted(h.since for h in handlers()
                        if h.op_type == node.op_type and h.domain == node.domain)
        if sinces:
            return (f"no handler for version {node.version} (handlers exist from version "
                    f"{sinces[0]})")
        kind = "custom op" if node.domain == "custom" else "builtin"
        return f"no handler for {kind} {node.op_type}"

    def _fail(self, node: Node, error: ConversionError) -> None:
        if isinstance(error, UnsupportedOp) and error.hint == UnsupportedOp.default_hint:
            error.hint = _HINT
        super()._fail(node, error)


def convert_tflite(model: str | os.PathLike[str] | bytes, signature: str | None = None,
                   input_shapes: Mapping[str, Sequence[int]] | None = None, *,
                   fold_fp16: bool = False, context: MLContext | None = None,
                   **settings: Any) -> ConversionResult:
    """Convert a TFLite model (path or bytes) to a WebNN graph.

    Raises `InvalidModel` (unreadable model, unknown signature, unresolved dimensions) or
    `ConversionFailed` (one error listing every operator that could not be converted).
    """
    from op_mappings.tflite import lookup

    source: TFLiteSourceGraph = read_tflite(
        model, signature=signature, input_shapes=input_shapes,
        settings={"fold_fp16": bool(fold_fp16), **settings})
    result = TFLiteImporter(source, lookup, context).run()
    return ConversionResult(result.graph, result.report, result.inputs, result.outputs, source)
