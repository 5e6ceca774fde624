"""Model readers: each turns a model file into a small format-neutral view (nodes in
topological order with schema defaults filled in, graph inputs/outputs, constants as numpy
arrays). See ../shared/docs/architecture.md section 1."""

from __future__ import annotations
