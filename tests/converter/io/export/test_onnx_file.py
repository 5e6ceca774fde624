"""`converter.io.export.onnx_file`: the streamed .onnx writer gives the same message as
`onnx.save_model` (oracle: onnx's own parser, onnxruntime) without holding the serialized
model in memory (oracle: the writing process's peak RSS, measured in a child)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from converter.io.export.onnx_file import save_streamed, streamed_size, write_streamed
from tests.timing import HANG_GUARD_S


def _model(count: int = 3, elements: int = 1000) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(elements).astype(np.float32), f"w{i}")
             for i in range(count)]
    nodes = [helper.make_node("Add", ["x" if i == 0 else f"y{i - 1}", f"w{i}"], [f"y{i}"])
             for i in range(count)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])],
        [helper.make_tensor_value_info(f"y{count - 1}", TensorProto.FLOAT, [elements])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="test")
    model.ir_version = 9  # what the installed onnxruntime reads
    helper.set_model_props(model, {"k": "v"})
    return model


def test_the_streamed_file_is_the_same_model(tmp_path: Path) -> None:
    model = _model()
    buffer = io.BytesIO()
    written = write_streamed(model, buffer)
    assert written == len(buffer.getvalue()) == streamed_size(model) == model.ByteSize()
    parsed = onnx.ModelProto()
    parsed.ParseFromString(buffer.getvalue())
    assert parsed == model
    save_streamed(model, tmp_path / "m.onnx")
    onnx.checker.check_model(str(tmp_path / "m.onnx"))
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    x = np.ones(1000, np.float32)
    expected = x
    for t in model.graph.initializer:  # in the model's order, in float32
        expected = expected + numpy_helper.to_array(t)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], expected)


def test_models_without_graph_or_initializers() -> None:
    for model in (onnx.ModelProto(ir_version=9), _model(count=1, elements=1)):
        buffer = io.BytesIO()
        write_streamed(model, buffer)
        parsed = onnx.ModelProto()
        parsed.ParseFromString(buffer.getvalue())
        assert parsed == model and streamed_size(model) == len(buffer.getvalue())
    empty = helper.make_model(helper.make_graph([], "g", [], []))
    buffer = io.BytesIO()
    write_streamed(empty, buffer)
    assert onnx.load_from_string(buffer.getvalue()) == empty


PEAK = """
import sys
from pathlib import Path
from tests.memory import vm_hwm_kib
import numpy as np
from onnx import numpy_helper, helper
from converter.io.export.onnx_file import save_streamed
rng = np.random.default_rng(0)
inits = [numpy_helper.from_array(rng.standard_normal(4_000_000).astype(np.float32), f"w{i}")
         for i in range(8)]  # 8 x 16 MB
model = helper.make_model(helper.make_graph([], "g", [], [], inits))
del inits
before = vm_hwm_kib()
if sys.argv[2] == "streamed":
    save_streamed(model, Path(sys.argv[1]))
else:
    Path(sys.argv[1]).write_bytes(model.SerializeToString())
print(vm_hwm_kib() - before)
"""


def test_the_writer_does_not_hold_the_serialized_model(tmp_path: Path) -> None:
    """Peak RSS growth while writing a 128 MB model: under half the model when streamed
    (at most about one 16 MB initializer), the whole model for SerializeToString."""
    growth = {}
    files = [tmp_path / "streamed.onnx", tmp_path / "whole.onnx"]
    try:
        _measure(growth, tmp_path)
        assert onnx.load(str(files[0])) == onnx.load(str(files[1]))
    finally:  # 256 MB: not left in the temporary folder, failing or not
        for f in files:
            f.unlink(missing_ok=True)
    model_bytes = 8 * 16_000_000
    assert growth["whole"] > model_bytes // 2  # the measure sees a whole copy
    assert growth["streamed"] < model_bytes // 2


def _measure(growth: dict[str, int], tmp_path: Path) -> None:
    for how in ("streamed", "whole"):
        r = subprocess.run([sys.executable, "-c", PEAK, str(tmp_path / f"{how}.onnx"), how],
                           capture_output=True, text=True, timeout=HANG_GUARD_S, check=True,
                           cwd=Path(__file__).resolve().parents[4])
        growth[how] = int(r.stdout) * 1024  # VmHWM is in KiB
