"""The vectorized GatherND and NonMaxSuppression of the host steps' evaluator
(converter/runtimes/host/fast_ops.py) give onnxruntime's results exactly, on random cases
with ties, degenerate boxes, both box formats, thresholds and batch dimensions."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from converter.runtimes.host import fast_ops
from converter.runtimes.host.fast_ops import FAST_OPS


def _model(node: onnx.NodeProto, types: dict[str, int], out: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, None) for n, t in types.items()],
        [helper.make_tensor_value_info(node.output[0], out, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _both(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = ReferenceEvaluator(model, new_ops=FAST_OPS).run(None, feeds)[0]
    return want, got


@pytest.mark.parametrize("max_pairs", [fast_ops.MAX_PAIRS, 0])  # pairwise, one by one
def test_non_max_suppression_matches_onnxruntime(max_pairs: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_ops, "MAX_PAIRS", max_pairs)
    rng = np.random.default_rng(0)
    for trial in range(40):
        batches, classes, count = rng.integers(1, 3), rng.integers(1, 4), rng.integers(0, 80)
        boxes = rng.uniform(0, 1, (batches, count, 4)).astype(np.float32)
        if trial % 3 == 0:  # equal and empty boxes
            boxes = np.round(boxes * 4) / 4
        scores = rng.uniform(0, 1, (batches, classes, count)).astype(np.float32)
        if trial % 2 == 0:  # ties
            scores = np.round(scores * 5) / 5
        feeds = {"boxes": boxes, "scores": scores,
                 "most": np.array([rng.integers(0, 40)], np.int64),
                 "iou": np.array([rng.uniform(0, 0.9)], np.float32)}
        names = ["boxes", "scores", "most", "iou"]
        if trial % 4 < 2:
            feeds["threshold"] = np.array([rng.uniform(0, 0.5)], np.float32)
            names.append("threshold")
        node = helper.make_node("NonMaxSuppression", names, ["selected"],
                                center_point_box=trial % 2)
        types = {n: TensorProto.INT64 if n == "most" else TensorProto.FLOAT for n in names}
        want, got = _both(_model(node, types, TensorProto.INT64), feeds)
        np.testing.assert_array_equal(got, want.reshape(-1, 3), err_msg=str(trial))
        assert got.dtype == np.int64


def test_gather_nd_matches_onnxruntime() -> None:
    rng = np.random.default_rng(1)
    for _ in range(40):
        batch = int(rng.integers(0, 3))
        shape = [int(d) for d in rng.integers(1, 5, size=int(rng.integers(batch + 1, 5)))]
        k = int(rng.integers(1, len(shape) - batch + 1))
        outer = shape[:batch] + [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
        indices = np.stack([rng.integers(-shape[batch + i], shape[batch + i], size=outer)
                            for i in range(k)], -1).astype(np.int64)
        data = rng.normal(size=shape).astype(np.float32)
        node = helper.make_node("GatherND", ["data", "indices"], ["out"], batch_dims=batch)
        want, got = _both(_model(node, {"data": TensorProto.FLOAT,
                                        "indices": TensorProto.INT64}, TensorProto.FLOAT),
                          {"data": data, "indices": indices})
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_roi_align_matches_onnxruntime() -> None:
    rng = np.random.default_rng(2)
    types = {"X": TensorProto.FLOAT, "rois": TensorProto.FLOAT, "index": TensorProto.INT64}
    for trial in range(30):
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        h, w, count = int(rng.integers(2, 12)), int(rng.integers(2, 12)), int(rng.integers(1, 8))
        x1, y1 = rng.uniform(-3, w + 2, count), rng.uniform(-3, h + 2, count)
        rois = np.stack([x1, y1, x1 + rng.uniform(0, w, count), y1 + rng.uniform(0, h, count)],
                        1).astype(np.float32)
        feeds = {"X": rng.normal(size=(n, c, h, w)).astype(np.float32), "rois": rois,
                 "index": rng.integers(0, n, count).astype(np.int64)}
        node = helper.make_node(
            "RoiAlign", ["X", "rois", "index"], ["Y"], output_height=int(rng.integers(1, 5)),
            output_width=int(rng.integers(1, 5)), sampling_ratio=int(rng.integers(0, 3)),
            spatial_scale=float(rng.choice([1.0, 0.5, 0.25])),
            coordinate_transformation_mode=["half_pixel", "output_half_pixel"][trial % 2],
            mode="avg" if trial % 5 else "max")  # max: onnx's own implementation
        want, got = _both(_model(node, types, TensorProto.FLOAT), feeds)
        assert got.shape == want.shape and got.dtype == np.float32
        if trial % 5:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(trial))


def test_scatter_elements_matches_onnxruntime() -> None:
    rng = np.random.default_rng(3)
    types = {"data": TensorProto.FLOAT, "indices": TensorProto.INT64,
             "updates": TensorProto.FLOAT}
    for trial in range(40):
        shape = [int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4)))]
        axis = int(rng.integers(-len(shape), len(shape)))
        reduction = ["none", "add", "mul", "max", "min"][trial % 5]
        taken = int(rng.integers(1, shape[axis] + 1))
        if reduction == "none":  # distinct targets: the result does not depend on order
            indices = np.argsort(rng.random(shape), axis=axis).take(range(taken), axis=axis)
        else:  # repeated and negative targets
            sizes = list(shape)
            sizes[axis] = taken
            indices = rng.integers(-shape[axis], shape[axis], size=sizes)
        feeds = {"data": rng.normal(size=shape).astype(np.float32),
                 "indices": indices.astype(np.int64),
                 "updates": rng.normal(size=indices.shape).astype(np.float32)}
        node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["out"],
                                axis=axis, reduction=reduction)
        model = _model(node, types, TensorProto.FLOAT)
        model.opset_import[0].version = 18  # max/min reductions
        want, got = _both(model, feeds)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(trial))
