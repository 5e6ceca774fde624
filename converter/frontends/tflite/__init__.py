"""The TFLite (LiteRT) front end: flatbuffer reader (`reader`), its part of the importer loop
with subgraph inlining (`importer.TFLiteFrontEnd`), LiteRT reference runs (`reference`) and
`inspect` (`inspect`). Registering costs no tflite import; `frontend` is the implementation
module (`convert`, `import_source`)."""

from __future__ import annotations

from converter.frontends.base import Frontend, register


def _sniff(head: bytes, suffix: str) -> bool:
    """The flatbuffer file identifier ``TFL3`` at offset 4, or the ``.tflite`` suffix (the
    reader then reports what is wrong with the file)."""
    return head[4:8] == b"TFL3" or suffix == ".tflite"


FRONTEND = register(Frontend(
    name="tflite", label="TFLite", reference="LiteRT", version_unit="version",
    suffixes=(".tflite",), options=frozenset({"input_dims", "input_shapes", "signature",
                                              "budgets"}),
    handlers="op_mappings.tflite", module="converter.frontends.tflite.frontend", sniff=_sniff))
