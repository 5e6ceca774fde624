"""The package version (pyproject.toml's `project.version`), read by the export marker and
re-exported as `converter.__version__`."""

from __future__ import annotations

__version__ = "0.1.0"
