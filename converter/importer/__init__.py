"""The importer: a `SourceGraph` -> WebNN builder calls, through the op_mappings handlers.

`loop` is the importer loop (`Importer`, failures collected into one `ConversionFailed`) and
the `FrontEnd` protocol it calls for what source formats differ in; `folding` folds
constant nodes, `operands` stores the operands by name, `context` is what handlers see
(`ImportContext`, `ImportObserver`), `metering` the budget accounting. The names below are
the package's public interface.
"""

from __future__ import annotations

from converter.importer.context import (
           ImportContext,
           ImportObserver,
           SubgraphRunner,
           Value,
           dtype_str,
           release_mapped_pages,
)
from converter.importer.loop import (
           IMPORT_PROGRESS,
           FrontEnd,
           Importer,
           ImportResult,
           check_output_count,
           nested_error,
           readonly,
)
from converter.importer.op_handler import Lookup, OpHandler

__all__ = ["IMPORT_PROGRESS", "FrontEnd", "ImportContext",
           "ImportObserver", "ImportResult", "Importer", "Lookup", "OpHandler",
           "SubgraphRunner", "Value", "check_output_count", "dtype_str", "nested_error",
           "readonly", "release_mapped_pages"]
