"""Hand-built ONNX models with data-dependent tails (onnx.helper), for the host-step tests:
each `make_*` returns (model, inputs) with inputs drawn from a seeded generator."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Model = tuple[onnx.ModelProto, dict[str, np.ndarray]]
OPSET = 17


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], inits: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "host_tail", inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _f(name: str, shape: list[int | str | None] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _i(name: str, shape: list[int | str | None] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, shape)


def make_nonzero_gather(seed: int = 0) -> Model:
    """y = 2x (graph); picked = y[nonzero(y > 0.5)] (host)."""
    n = helper.make_node
    nodes = [n("Mul", ["x", "two"], ["y"], name="mul"),
             n("Greater", ["y", "half"], ["mask"], name="greater"),
             n("NonZero", ["mask"], ["idx"], name="nonzero"),
             n("Squeeze", ["idx", "zero"], ["flat"], name="squeeze"),
             n("Gather", ["y", "flat"], ["picked"], name="gather", axis=0)]
    model = _model(nodes, [_f("x", [16])], [_f("y", [16]), _f("picked", ["n"])],
                   {"two": np.array(2, np.float32), "half": np.array(0.5, np.float32),
                    "zero": np.array([0], np.int64)})
    x = np.random.default_rng(seed).uniform(-1, 1, 16).astype(np.float32)
    return model, {"x": x}


def make_detection(seed: int = 0, anchors: int = 64, classes: int = 3) -> Model:
    """A detector's post-processing as exported ones write it: sigmoid scores, best class per
    box, threshold -> NonZero -> Gather -> TopK with k = Min(20, count) -> NonMaxSuppression
    (constant max_output_boxes_per_class) -> Gather of boxes, scores and labels."""
    n = helper.make_node
    nodes = [
        n("Sigmoid", ["logits"], ["scores"], name="/sigmoid"),
        n("ReduceMax", ["scores"], ["best"], name="/reduce_max", axes=[1], keepdims=0),
        n("ArgMax", ["scores"], ["labels_all"], name="/argmax", axis=1, keepdims=0),
        n("Greater", ["best", "thr"], ["mask"], name="/greater"),
        n("NonZero", ["mask"], ["nz"], name="/nonzero"),
        n("Reshape", ["nz", "minus1"], ["cand"], name="/reshape_cand"),
        n("Gather", ["best", "cand"], ["cand_scores"], name="/gather_scores", axis=0),
        n("Shape", ["cand_scores"], ["count"], name="/shape"),
        n("Min", ["topk_max", "count"], ["k"], name="/min"),
        n("TopK", ["cand_scores", "k"], ["top_scores", "top_idx"], name="/topk", axis=0),
        n("Gather", ["cand", "top_idx"], ["sel"], name="/gather_sel", axis=0),
        n("Gather", ["boxes", "sel"], ["sel_boxes"], name="/gather_boxes", axis=0),
        n("Unsqueeze", ["sel_boxes", "zero"], ["nms_boxes"], name="/unsqueeze"),
        n("Reshape", ["top_scores", "one_one_minus1"], ["nms_scores"], name="/reshape_scores"),
        n("NonMaxSuppression", ["nms_boxes", "nms_scores", "max_out", "iou", "score_thr"],
          ["selected"], name="/nms"),
        n("Gather", ["selected", "two"], ["keep"], name="/gather_keep", axis=1),
        n("Gather", ["sel_boxes", "keep"], ["det_boxes"], name="/det_boxes", axis=0),
        n("Gather", ["top_scores", "keep"], ["det_scores"], name="/det_scores", axis=0),
        n("Gather", ["labels_all", "sel"], ["sel_labels"], name="/sel_labels", axis=0),
        n("Gather", ["sel_labels", "keep"], ["det_labels"], name="/det_labels", axis=0),
    ]
    inits = {"thr": np.array(0.3, np.float32), "minus1": np.array([-1], np.int64),
             "topk_max": np.array([20], np.int64), "zero": np.array([0], np.int64),
             "one_one_minus1": np.array([1, 1, -1], np.int64),
             "max_out": np.array([10], np.int64), "iou": np.array([0.5], np.float32),
             "score_thr": np.array([0.0], np.float32), "two": np.array(2, np.int64)}
    model = _model(nodes, [_f("boxes", [anchors, 4]), _f("logits", [anchors, classes])],
                   [_f("det_boxes", ["d", 4]), _f("det_scores", ["d"]), _i("det_labels", ["d"])],
                   inits)
    rng = np.random.default_rng(seed)
    corner = rng.uniform(0, 0.7, (anchors, 2))
    size = rng.uniform(0.1, 0.3, (anchors, 2))
    boxes = np.concatenate([corner, corner + size], axis=1).astype(np.float32)
    logits = rng.normal(-0.5, 1.5, (anchors, classes)).astype(np.float32)
    return model, {"boxes": boxes, "logits": logits}


def make_runtime_reshape(seed: int = 0) -> Model:
    """z = x + 1 (graph); y = Relu(Reshape(2x, shape)) with `shape` chosen by the data:
    [4, 6] or [6, 4] by the ArgMax of x's sums over its last two axes (host; no input to pin
    decides it)."""
    n = helper.make_node
    nodes = [n("Add", ["x", "one"], ["z"], name="add"),
             n("Mul", ["x", "two"], ["x2"], name="mul"),
             n("ReduceSum", ["x", "axes"], ["sums"], name="sums", keepdims=0),
             n("ArgMax", ["sums"], ["which"], name="argmax", axis=0, keepdims=1),
             n("Gather", ["shapes", "which"], ["shape2"], name="pick", axis=0),
             n("Reshape", ["shape2", "minus1"], ["shape"], name="flatten_shape"),
             n("Reshape", ["x2", "shape"], ["r"], name="reshape"),
             n("Relu", ["r"], ["y"], name="relu")]
    model = _model(nodes, [_f("x", [2, 3, 4])], [_f("z", [2, 3, 4]), _f("y", ["a", "b"])],
                   {"one": np.array(1, np.float32), "two": np.array(2, np.float32),
                    "axes": np.array([1, 2], np.int64), "minus1": np.array([-1], np.int64),
                    "shapes": np.array([[4, 6], [6, 4]], np.int64)})
    x = np.random.default_rng(seed).normal(size=(2, 3, 4)).astype(np.float32)
    return model, {"x": x}


def make_compress(seed: int = 0) -> Model:
    """kept = Compress(3x, x > 0) (host); s = Sigmoid(x) (graph)."""
    n = helper.make_node
    nodes = [n("Sigmoid", ["x"], ["s"], name="sigmoid"),
             n("Mul", ["x", "three"], ["x3"], name="mul"),
             n("Greater", ["x", "zero"], ["mask"], name="greater"),
             n("Compress", ["x3", "mask"], ["kept"], name="compress", axis=0)]
    model = _model(nodes, [_f("x", [12])], [_f("s", [12]), _f("kept", ["n"])],
                   {"three": np.array(3, np.float32), "zero": np.array(0, np.float32)})
    x = np.random.default_rng(seed).normal(size=12).astype(np.float32)
    return model, {"x": x}


def make_unique(seed: int = 0) -> Model:
    """Unique(Floor(3x)) with all four outputs (host)."""
    n = helper.make_node
    nodes = [n("Mul", ["x", "three"], ["x3"], name="mul"),
             n("Floor", ["x3"], ["f"], name="floor"),
             n("Unique", ["f"], ["u", "indices", "inverse", "counts"], name="unique",
               sorted=1)]
    model = _model(nodes, [_f("x", [20])],
                   [_f("u", ["n"]), _i("indices", ["n"]), _i("inverse", [20]),
                    _i("counts", ["n"])],
                   {"three": np.array(3, np.float32)})
    x = np.random.default_rng(seed).uniform(-1, 1, 20).astype(np.float32)
    return model, {"x": x}


def make_if_tail(seed: int = 0) -> Model:
    """torchvision's batched_nms pattern: If(no candidate) then an empty result else one
    computed from outer values (the bool `mask` and `x2` from the graph, `idx` from the host
    steps); seed 1 takes the empty branch."""
    n = helper.make_node
    then_branch = helper.make_graph(
        [n("Constant", [], ["none"], name="empty",
           value=numpy_helper.from_array(np.zeros(0, np.float32)))],
        "then", [], [_f("none", [0])])
    else_branch = helper.make_graph(
        [n("Compress", ["x2", "mask"], ["kept"], name="compress", axis=0),
         n("Cast", ["idx"], ["idx_f"], name="cast", to=TensorProto.FLOAT),
         n("ReduceSum", ["idx_f"], ["total"], name="sum", keepdims=0),
         n("Add", ["kept", "total"], ["some"], name="add")],
        "else", [], [_f("some", ["n"])])
    nodes = [n("Mul", ["x", "two"], ["x2"], name="mul"),
             n("Greater", ["x", "thr"], ["mask"], name="greater"),
             n("NonZero", ["mask"], ["idx"], name="nonzero"),
             n("Size", ["idx"], ["count"], name="size"),
             n("Equal", ["count", "zero"], ["none_left"], name="equal"),
             n("If", ["none_left"], ["picked"], name="if", then_branch=then_branch,
               else_branch=else_branch)]
    model = _model(nodes, [_f("x", [10])], [_f("picked", ["n"])],
                   {"two": np.array(2, np.float32), "thr": np.array(0.5, np.float32),
                    "zero": np.array(0, np.int64)})
    x = np.random.default_rng(seed).uniform(-1, 1, 10).astype(np.float32)
    if seed % 2:
        x = -np.abs(x)  # nothing over the threshold: the empty branch
    return model, {"x": x}


def make_streaming_tail() -> onnx.ModelProto:
    """A streaming model with a data-dependent tail: stateN = state + x (graph, carried
    from call to call), idx = nonzero(stateN > 1.5) (host)."""
    n = helper.make_node
    nodes = [n("Add", ["state", "x"], ["stateN"], name="acc"),
             n("Greater", ["stateN", "thr"], ["mask"], name="greater"),
             n("NonZero", ["mask"], ["idx"], name="nonzero")]
    return _model(nodes, [_f("x", [5]), _f("state", [5])],
                  [_f("stateN", [5]), _i("idx", [1, "n"])],
                  {"thr": np.array(1.5, np.float32)})


MODELS: dict[str, Callable[..., Model]] = {
    "nonzero_gather": make_nonzero_gather, "detection": make_detection,
    "runtime_reshape": make_runtime_reshape, "compress": make_compress, "unique": make_unique,
    "if_tail": make_if_tail}
