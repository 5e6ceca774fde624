"""The shipped model zoo (package data, read with importlib.resources): the manifests
`zoo.toml` (ONNX) and `zoo_tflite.toml` (TFLite) that `webnn-convert zoo` runs without
arguments, and the generator scripts their `source = "generated:<script>"` entries name
(`make_tiny_cnn.py`, `make_recurrent.py`, `make_attention.py`, `make_int8_tflite.py`; each
defines `make(path, **args)` and runs standalone: `python -m converter.zoo.models.make_tiny_cnn
OUT.onnx`). Only onnx, numpy and, for the int8 TFLite model, the `tflite` extra are imported;
the library imports none of these scripts (`converter.zoo.generated` loads them by path).
The transformer zoo and the architecture sweeps, which need extras to generate, stay in the
repository's models/ folder.
"""
