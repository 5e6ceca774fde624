"""The importer: a `SourceGraph` -> WebNN builder calls, through the op_mappings handlers.

`loop` is the importer loop (`Importer`, folding, failures collected into one
`ConversionFailed`), `context` what handlers see (`ImportContext`, `ImportObserver`), `report`
the conversion report. The names below are the package's public interface.
"""

from __future__ import annotations

from converter.importer.context import (
           MAX_INLINE_DEPTH,
           MAX_UNROLLED_NODES,
           ImportContext,
           ImportObserver,
           SubgraphRunner,
           Value,
           dtype_str,
           release_mapped_pages,
           webnn_dtype,
)
from converter.importer.loop import IMPORT_PROGRESS, Importer, ImportResult, nested_error, readonly
from converter.results.report import STATUSES, ConversionReport, NodeRecord

__all__ = ["IMPORT_PROGRESS", "MAX_INLINE_DEPTH", "MAX_UNROLLED_NODES", "STATUSES",
           "ConversionReport", "ImportContext", "ImportObserver", "ImportResult", "Importer",
           "NodeRecord", "SubgraphRunner", "Value", "dtype_str", "nested_error",
           "readonly", "release_mapped_pages", "webnn_dtype"]
