"""benchmarks/convert_int4.py in its tiny configuration, so that the script cannot rot:
--quick (the zoo's tiny genai int4 Llama, 3 rounds; slow, needs the transformers extra) and,
without models, its timing on a one-node MatMulNBits file written here."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "convert_int4.py"
MISSING = [m for m in ("torch", "transformers", "onnxruntime_genai")
           if importlib.util.find_spec(m) is None]


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("convert_int4", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"needs the transformers extra (missing: {MISSING})")
def test_quick_run(tmp_path: Path) -> None:
    out = tmp_path / "convert.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    [row] = data["rows"]
    assert row["model"] == "tiny" and row["repeat"] == 3 and row["operations"] > 0
    assert row["convert_s"] > 0 and row["session_s"] > 0
    assert row["convert_over_session"] == pytest.approx(row["convert_s"] / row["session_s"])
    assert data["graph_optimization"] == "ORT_ENABLE_ALL" and data["threads"] == 1
    assert "convert/session" in proc.stdout


def test_bench_without_generated_models(tmp_path: Path) -> None:
    """bench() on a MatMulNBits model written here: both sides timed `repeat` times."""
    ci = _module()
    n, k, block = 64, 128, 32
    rng = np.random.default_rng(0)
    b = rng.integers(0, 256, (n, k // block, block // 2), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.1, (n, k // block)).astype(np.float32)
    node = helper.make_node("MatMulNBits", ["a", "b", "s"], ["y"], domain="com.microsoft",
                            K=k, N=n, bits=4, block_size=block)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "a", TensorProto.FLOAT, ["m", k])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, ["m", n])],
        [numpy_helper.from_array(b, "b"), numpy_helper.from_array(scales, "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              ir_version=10)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    row = ci.bench("one", path, {"a": [2, k]}, repeat=2, threads=1)
    assert row["model"] == "one" and row["repeat"] == 2 and row["operations"] >= 2
    assert row["convert_range_s"][0] <= row["convert_s"] <= row["convert_range_s"][1]
    assert row["session_range_s"][0] <= row["session_s"] <= row["session_range_s"][1]
    shapes = ci.input_shapes(512, 4)
    assert shapes["input_ids"] == [1, 8] and shapes["attention_mask"] == [1, 12]
    assert shapes["past_key_values.3.value"] == [1, 2, 4, 128] and len(shapes) == 10
    assert ci.SIZES["tiny"] == (64, 2) and set(ci.DEFAULT_SIZES) <= set(ci.SIZES)
