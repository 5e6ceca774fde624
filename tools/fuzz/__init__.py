"""An in-repo fuzzer for webnn-convert (issue 12, point 7).

Design:

- `seeds`: a corpus generated fresh from the project's own generators (models/make_*.py,
  one-node ONNX models for the ops with data-dependent sizes or subgraphs, TFLite models
  built with LiteRT's schema, the stored TFLite control-flow fixtures) plus those models
  exported as WebNN graphs (`.webnn`, `.webnn.json`, `.weights` + `.manifest.json`,
  `.safetensors`).
- `mutators`: one structure-aware mutator per kind of file (ONNX protobuf, TFLite
  flatbuffer, `.webnn` tokens, JSON documents, manifests, safetensors headers, WGWT blobs),
  generic byte mutations for all, companion-file tricks (symlinks to a canary outside the
  model folder, FIFOs, missing files) and extreme command-line values.
- `runner`: the real CLI (`cli.main.main`) in a child process per mutant, under RLIMIT_AS
  and a wall-time limit; forked from a warm parent (fast) or a fresh interpreter.
- `classify`: ok / clean rejection / escape / hang / memory / crash / internal / leftover /
  js / multi-line, with the deepest project frame of tracebacks.
- `minimize`, `campaign`: reproducers saved per finding and shrunk within a budget; a
  summary by class and kind.

Run `python -m tools.fuzz --help` from the repository root.
"""
