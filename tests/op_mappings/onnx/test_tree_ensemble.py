"""ai.onnx.ml TreeEnsemble (5) and TreeEnsembleRegressor (1, 3) vs onnxruntime on random
forests: every comparison mode (LEQ, LT, GTE, GT, EQ, NEQ, set membership) on inputs with
ties, NaN features with missing_value_tracks_true, several trees and targets, aggregate
SUM / AVERAGE / MIN / MAX, post_transform NONE / SOFTMAX / LOGISTIC / SOFTMAX_ZERO,
single-leaf trees, base values, float16 and int64 inputs; and the PROBIT rejection."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import converter
from converter.core.errors import ConversionFailed
from converter.frontends.onnx.tensors import onnx_elem_type
from tests.op_mappings.onnx.harness import IR_VERSION, assert_close, run_ort

ML = "ai.onnx.ml"
MODES = ["LEQ", "LT", "GTE", "GT", "EQ", "NEQ", "MEMBER"]
N_FEATURES = 4


class Forest:
    """Random trees in a neutral form: nodes (feature, mode, split or member set, missing
    tracks true, (true child, is leaf), (false child, is leaf)) and leaves (target,
    weight)."""

    def __init__(self, n_trees: int, n_targets: int, modes: list[str], seed: int,
                 depth: int = 3, single_leaf_tree: bool = False) -> None:
        self.rng = np.random.default_rng(seed)
        self.modes = modes
        self.n_targets = n_targets
        self.nodes: list[dict[str, Any]] = []
        self.leaves: list[tuple[int, float]] = []
        self.roots: list[tuple[int, bool]] = []
        for t in range(n_trees):
            if single_leaf_tree and t == 0:
                self.roots.append((self._leaf(), True))
            else:
                self.roots.append((self._node(depth), False))

    def _leaf(self) -> int:
        self.leaves.append((int(self.rng.integers(self.n_targets)),
                            float(np.round(self.rng.uniform(-2, 2), 3))))
        return len(self.leaves) - 1

    def _child(self, depth: int) -> tuple[int, bool]:
        if depth <= 0 or self.rng.uniform() < 0.25:
            return self._leaf(), True
        return self._node(depth - 1), False

    def _node(self, depth: int) -> int:
        idx = len(self.nodes)
        mode = str(self.rng.choice(self.modes))
        node = {"feature": int(self.rng.integers(N_FEATURES)), "mode": mode,
                "split": float(self.rng.integers(0, 5)) + (0.5 if self.rng.uniform() < 0.3
                                                            else 0.0),
                "members": sorted({float(v) for v in self.rng.integers(0, 5, size=2)}),
                "missing": int(self.rng.uniform() < 0.5)}
        self.nodes.append(node)
        node["true"] = self._child(depth - 1)
        node["false"] = self._child(depth - 1)
        return idx

    # -- TreeEnsemble (5) ------------------------------------------------------------
    def v5_attrs(self, dtype: np.dtype, aggregate: int, post: int) -> dict[str, Any]:
        """Single-leaf trees become a root node whose two children are that leaf."""
        nodes = list(self.nodes)
        roots = []
        for idx, is_leaf in self.roots:
            if is_leaf:
                nodes.append({"feature": 0, "mode": "LEQ", "split": 0.0, "members": [],
                              "missing": 0, "true": (idx, True), "false": (idx, True)})
                roots.append(len(nodes) - 1)
            else:
                roots.append(idx)
        elem = onnx_elem_type(np.dtype(dtype).name)
        members: list[float] = []
        for n in nodes:
            if n["mode"] == "MEMBER":
                members += [*n["members"], np.nan]
        attrs = {
            "n_targets": self.n_targets, "aggregate_function": aggregate,
            "post_transform": post, "tree_roots": roots,
            "nodes_featureids": [n["feature"] for n in nodes],
            "nodes_modes": helper.make_tensor("modes", TensorProto.UINT8, [len(nodes)],
                                              [MODES.index(n["mode"]) for n in nodes]),
            "nodes_splits": helper.make_tensor("splits", elem, [len(nodes)],
                                               [n["split"] for n in nodes]),
            "nodes_truenodeids": [n["true"][0] for n in nodes],
            "nodes_trueleafs": [int(n["true"][1]) for n in nodes],
            "nodes_falsenodeids": [n["false"][0] for n in nodes],
            "nodes_falseleafs": [int(n["false"][1]) for n in nodes],
            "nodes_missing_value_tracks_true": [n["missing"] for n in nodes],
            "leaf_targetids": [t for t, _ in self.leaves],
            "leaf_weights": helper.make_tensor("w", elem, [len(self.leaves)],
                                               [w for _, w in self.leaves]),
        }
        if members:
            attrs["membership_values"] = helper.make_tensor("m", elem, [len(members)],
                                                            members)
        return attrs

    # -- TreeEnsembleRegressor (1, 3) ------------------------------------------------
    def v1_attrs(self, aggregate: str, post: str, all_targets: bool = False
                 ) -> dict[str, Any]:
        """Per tree, node ids renumbered from 0 (root first); leaves become LEAF nodes;
        `all_targets`: every leaf gives a weight to every target (its own target gets the
        leaf weight, the others weight + 0.1·target)."""
        cols: dict[str, list[Any]] = {k: [] for k in (
            "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
            "nodes_values", "nodes_truenodeids", "nodes_falsenodeids",
            "nodes_missing_value_tracks_true", "target_treeids", "target_nodeids",
            "target_ids", "target_weights")}
        for tree, root in enumerate(self.roots):
            ids: dict[tuple[int, bool], int] = {}
            order: list[tuple[int, bool]] = []
            stack = [root]
            while stack:  # pre-order: root first, true subtree before false subtree
                ref = stack.pop()
                ids[ref] = len(order)
                order.append(ref)
                if not ref[1]:
                    stack += [self.nodes[ref[0]]["false"], self.nodes[ref[0]]["true"]]
            for ref in order:
                idx, is_leaf = ref
                cols["nodes_treeids"].append(tree)
                cols["nodes_nodeids"].append(ids[ref])
                if is_leaf:
                    target, weight = self.leaves[idx]
                    cols["nodes_featureids"].append(0)
                    cols["nodes_modes"].append("LEAF")
                    cols["nodes_values"].append(0.0)
                    cols["nodes_truenodeids"].append(0)
                    cols["nodes_falsenodeids"].append(0)
                    cols["nodes_missing_value_tracks_true"].append(0)
                    targets = range(self.n_targets) if all_targets else [target]
                    for t in targets:
                        cols["target_treeids"].append(tree)
                        cols["target_nodeids"].append(ids[ref])
                        cols["target_ids"].append(t)
                        cols["target_weights"].append(weight if t == target else
                                                      weight + 0.1 * t)
                else:
                    n = self.nodes[idx]
                    cols["nodes_featureids"].append(n["feature"])
                    cols["nodes_modes"].append("BRANCH_" + n["mode"])
                    cols["nodes_values"].append(n["split"])
                    cols["nodes_truenodeids"].append(ids[n["true"]])
                    cols["nodes_falsenodeids"].append(ids[n["false"]])
                    cols["nodes_missing_value_tracks_true"].append(n["missing"])
        return {**cols, "n_targets": self.n_targets, "aggregate_function": aggregate,
                "post_transform": post}


def _x(rows: int = 40, dtype: Any = np.float32, nan: bool = True, seed: int = 0
       ) -> np.ndarray:
    """Small integers and halves (ties with the splits), some NaN."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, size=(rows, N_FEATURES)) + 0.5 * rng.integers(0, 2, size=(
        rows, N_FEATURES))
    if nan:
        x[rng.uniform(size=x.shape) < 0.1] = np.nan
    return x.astype(dtype)


def _model(op: str, x: np.ndarray, attrs: dict[str, Any], ml_opset: int,
           outputs: tuple[str, ...] = ("y",)) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], list(outputs), domain=ML, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", onnx_elem_type(x.dtype.name), list(x.shape))],
        [onnx.ValueInfoProto(name=o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19),
                                                    helper.make_opsetid(ML, ml_opset)],
                              ir_version=IR_VERSION)
    return onnx.shape_inference.infer_shapes(model)


def _check(model: onnx.ModelProto, x: np.ndarray, rtol: float = 1e-5, atol: float = 1e-5
           ) -> None:
    expected = run_ort(model, {"x": x})
    got = converter.convert(model).run({"x": x})
    assert list(got) == list(expected)
    for name in got:
        assert_close(got[name], expected[name], rtol, atol, f"output {name}")


@pytest.mark.parametrize("mode", MODES)
def test_tree_ensemble_each_mode(mode: str) -> None:
    forest = Forest(4, 2, [mode], seed=MODES.index(mode))
    x = _x(seed=1)
    _check(_model("TreeEnsemble", x, forest.v5_attrs(x.dtype, 1, 0), 5), x)


# onnxruntime reads TreeEnsemble's integer post_transform with its own enum order (1 =
# LOGISTIC, 2 = SOFTMAX); the ONNX spec has 1 = SOFTMAX, 2 = LOGISTIC. The converter follows
# the spec, so onnxruntime gets the swapped code to compute the same transform.
ORT_POST = {0: 0, 1: 2, 2: 1, 3: 3}


@pytest.mark.parametrize("post", [0, 1, 2, 3])
@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
def test_tree_ensemble_aggregate_and_transform(aggregate: int, post: int) -> None:
    forest = Forest(6, 3, MODES, seed=10 + aggregate, depth=4)
    x = _x(seed=2)
    ours = _model("TreeEnsemble", x, forest.v5_attrs(x.dtype, aggregate, post), 5)
    oracle = _model("TreeEnsemble", x, forest.v5_attrs(x.dtype, aggregate, ORT_POST[post]), 5)
    expected = run_ort(oracle, {"x": x})["y"]
    assert_close(converter.convert(ours).run({"x": x})["y"], expected, 1e-5, 1e-5, "y")


def test_tree_ensemble_single_leaf_tree_and_one_target() -> None:
    forest = Forest(3, 1, ["LEQ", "MEMBER"], seed=20, single_leaf_tree=True)
    x = _x(seed=3)
    _check(_model("TreeEnsemble", x, forest.v5_attrs(x.dtype, 1, 0), 5), x)


def test_tree_ensemble_float16() -> None:
    """onnxruntime has no float16 TreeEnsemble: the oracle is the ONNX reference."""
    from onnx.reference import ReferenceEvaluator

    forest = Forest(5, 2, MODES, seed=21)
    x = _x(seed=4, dtype=np.float16)
    model = _model("TreeEnsemble", x, forest.v5_attrs(x.dtype, 0, 0), 5)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = converter.convert(model).run({"x": x})["y"]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                               rtol=1e-3, atol=1e-3)


def test_tree_ensemble_probit_is_rejected() -> None:
    forest = Forest(2, 1, ["LEQ"], seed=22)
    x = _x(seed=5)
    with pytest.raises(ConversionFailed, match="PROBIT is not supported"):
        converter.convert(_model("TreeEnsemble", x, forest.v5_attrs(x.dtype, 1, 4), 5))


REGRESSOR_MODES = MODES[:6]


@pytest.mark.parametrize("ml_opset", [1, 3])
@pytest.mark.parametrize("aggregate,post", [("SUM", "NONE"), ("AVERAGE", "LOGISTIC"),
                                            ("MIN", "SOFTMAX"), ("MAX", "SOFTMAX_ZERO"),
                                            ("SUM", "SOFTMAX")], ids=str)
def test_tree_ensemble_regressor(aggregate: str, post: str, ml_opset: int) -> None:
    """Leaves with a weight for every target (onnxruntime leaves a target that no tree
    reaches at 0 even with a base value; the spec adds the base value: see below)."""
    forest = Forest(5, 3, REGRESSOR_MODES, seed=30, depth=4, single_leaf_tree=True)
    x = _x(seed=6)
    attrs = forest.v1_attrs(aggregate, post, all_targets=True)
    attrs["base_values"] = [0.25, -0.5, 1.0]
    _check(_model("TreeEnsembleRegressor", x, attrs, ml_opset), x)


def test_tree_ensemble_regressor_base_values_of_unreached_targets() -> None:
    """Sparse targets with base values: the oracle is the ONNX reference (base values are
    added to every target)."""
    from onnx.reference import ReferenceEvaluator

    forest = Forest(3, 4, REGRESSOR_MODES, seed=32)
    x = _x(seed=8, nan=False)
    attrs = forest.v1_attrs("SUM", "NONE")
    attrs["base_values"] = [0.25, -0.5, 1.0, 2.0]
    model = _model("TreeEnsembleRegressor", x, attrs, 3)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = converter.convert(model).run({"x": x})["y"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_tree_ensemble_regressor_int64_input() -> None:
    """onnxruntime has no int64 regressor: the oracle is onnxruntime on the same small
    integers as float32 (exactly representable, so the comparisons are the same)."""
    forest = Forest(4, 2, REGRESSOR_MODES, seed=31)
    x = np.floor(_x(seed=7, nan=False)).astype(np.int64)
    attrs = forest.v1_attrs("SUM", "NONE", all_targets=True)
    xf = x.astype(np.float32)
    expected = run_ort(_model("TreeEnsembleRegressor", xf, attrs, 1), {"x": xf})["y"]
    got = converter.convert(_model("TreeEnsembleRegressor", x, attrs, 1)).run({"x": x})["y"]
    assert_close(got, expected, 1e-5, 1e-5, "y")


def test_tree_ensemble_regressor_tensor_attributes() -> None:
    forest = Forest(4, 2, REGRESSOR_MODES, seed=33)
    x = _x(seed=9)
    attrs = forest.v1_attrs("AVERAGE", "NONE", all_targets=True)
    values = attrs.pop("nodes_values")
    weights = attrs.pop("target_weights")
    attrs["nodes_values_as_tensor"] = helper.make_tensor("v", TensorProto.FLOAT, [len(values)],
                                                         values)
    attrs["target_weights_as_tensor"] = helper.make_tensor("w", TensorProto.FLOAT,
                                                           [len(weights)], weights)
    attrs["base_values_as_tensor"] = helper.make_tensor("b", TensorProto.FLOAT, [2],
                                                        [0.5, -1.5])
    _check(_model("TreeEnsembleRegressor", x, attrs, 3), x)


def _classifier_attrs(forest: Forest, post: str, labels: list[int],
                      base: list[float] | None) -> dict[str, Any]:
    attrs = forest.v1_attrs("SUM", post)
    renames = {"target_treeids": "class_treeids", "target_nodeids": "class_nodeids",
               "target_ids": "class_ids", "target_weights": "class_weights"}
    out = {renames.get(k, k): v for k, v in attrs.items()
           if k not in ("n_targets", "aggregate_function")}
    out["classlabels_int64s"] = labels
    if base is not None:
        out["base_values"] = base
    return out


@pytest.mark.parametrize("ml_opset", [1, 3])
@pytest.mark.parametrize("post,base", [("NONE", None), ("SOFTMAX", [0.1, -0.2, 0.3, 0.0]),
                                       ("LOGISTIC", None), ("SOFTMAX_ZERO", None)], ids=str)
def test_tree_ensemble_classifier_multiclass(post: str, base: list[float] | None,
                                             ml_opset: int) -> None:
    forest = Forest(5, 4, REGRESSOR_MODES, seed=40, depth=3)
    x = _x(seed=10)
    attrs = _classifier_attrs(forest, post, [7, 3, 11, 5], base)
    _check(_model("TreeEnsembleClassifier", x, attrs, ml_opset, outputs=("label", "scores")),
           x)


def test_tree_ensemble_classifier_binary_is_rejected() -> None:
    forest = Forest(2, 2, ["LEQ"], seed=41)
    x = _x(seed=11)
    model = _model("TreeEnsembleClassifier", x, _classifier_attrs(forest, "NONE", [0, 1], None),
                   3, outputs=("label", "scores"))
    with pytest.raises(ConversionFailed, match="binary classification"):
        converter.convert(model)
