"""Host steps in Python: the ONNX nodes of a model's data-dependent tail, run after the WebNN
graph by onnx's reference evaluator (`HostRunner`; docs/host-steps.md)."""

from converter.runtimes.host.runner import HostRunner, StepsLike

__all__ = ["HostRunner", "StepsLike"]
