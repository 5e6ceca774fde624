"""Readers and writers of the webnn-graph files (format doc `webnn-graph-format.md`): the
`.webnn` text, its `.webnn.json` twin, the WGWT weights blob + manifest and `.safetensors`
weights.

Modules, each with one job (lower layers first; no module imports one above it, and the
package's import graph is acyclic, see tests/converter/io/serialize/test_no_cycles.py):

- `errors`: `WebnnExportError`, `WebnnFormatError`, `WeightsMismatch`.
- `tables`: file constants and reader limits, data type names, keywords and option aliases
  (the operators and their parameters: `converter.core.webnn.operators`).
- `lexicon`: identifiers and literals as the writers spell them.
- `plan`: `plan(graph)` -> `WebnnPlan` (identifiers, constant storage, node layout) shared by
  every writer, with its `.webnn` text and manifest renderings.
- `weights`: the WGWT blob (`write_weights`, `WeightsBlob`) and its manifest
  (`parse_manifest`).
- `safetensors_weights`: `.safetensors` weights (`write_safetensors`, `SafetensorsWeights`).
- `text_writer`: `to_webnn`, `write_webnn`.
- `json_writer`: `to_json`, `iter_json`, `write_webnn_json`.
- `tokenizer`, `syntax`, `text_parser`: `.webnn` text -> `GraphText` (`parse`).
- `graph_builder`: `GraphText` -> `MLGraph` through a fresh builder (`GraphBuilder`).
- `loader`: weights discovery, `build_graph`, and the text entry points `loads`,
  `load_webnn`.
- `json_reader`: `parse_json`, `loads_json`, `load_webnn_json`, `is_json_document`.

Layering: this package sits below `converter.io.export` (which writes every format atomically
and offers `converter.export(...)` / `converter.load(...)`) and imports only `converter.core.webnn`,
`converter.core.errors` and `converter.core.confine` of the project; it never imports `converter.io.export`, `converter.api`,
the importers, `cli` or `op_mappings`. Submodules are not imported by the package itself:
import the one you need.
"""
