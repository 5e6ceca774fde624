"""webnn-converter: convert ONNX and TFLite models into W3C WebNN graphs, run and validate them."""

from __future__ import annotations

__version__ = "0.1.0"
