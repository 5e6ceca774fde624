"""The errors of the webnn-graph readers and writers.

All three derive from `ValueError`; none of them is a `converter.core.errors.ConversionError` (a
graph file is not a model conversion).
"""

from __future__ import annotations


class WebnnExportError(ValueError):
    """The graph cannot be written in the webnn-graph text format."""


class NotRepresentable(WebnnExportError):
    """A value the text format has no spelling for (NaN: its numbers have no NaN)."""


class WebnnFormatError(ValueError):
    """A `.webnn`, `.weights` or manifest file is malformed or cannot be loaded.

    `path`, `line` and `column` locate the problem (line/column are None when they do not
    apply); str() reads `path:line:column: message`.
    """

    def __init__(self, message: str, path: str = "<string>", line: int | None = None,
                 column: int | None = None) -> None:
        where = path
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {message}")
        self.message = message
        self.path = path
        self.line = line
        self.column = column


class WeightsMismatch(ValueError):
    """A weights source has no tensor under a key, or one that disagrees with the constant's
    declaration; the loader reports it at the declaration (file and position)."""


__all__ = ["NotRepresentable", "WebnnExportError", "WebnnFormatError", "WeightsMismatch"]
