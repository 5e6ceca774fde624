"""ai.onnx.ml TreeEnsemble (5), TreeEnsembleRegressor and TreeEnsembleClassifier (1, 3) ->
comparisons, one batched matmul over the trees' paths, and a matmul (or min/max) over the
leaves' weights.

The trees are attributes, so their structure is known at conversion time; the input rows
are evaluated in the graph:
1. every split node's condition, per comparison mode: gather the node's features from X
   ([B, nodes of that mode]) and compare with the thresholds (LEQ, LT, GTE, GT, EQ, NEQ), or
   test set membership (equal against the NaN-padded member list, any); a NaN feature
   goes the true way where `nodes_missing_value_tracks_true` says so;
2. root-to-leaf paths: path p of tree t is taken iff Σ_n cond[n]·M[t, n, p] = #(nodes that
   must be true on p), where M is +1 (must be true) / -1 (must be false) / 0: a batched
   matmul [T, B, nodes per tree] x [T, nodes per tree, paths per tree] (exact small
   integers in float32). Exactly one path per tree is taken;
3. aggregation over the trees: SUM (matmul of the taken paths with their leaf weights),
   AVERAGE (SUM / number of trees), MIN / MAX (per tree and target, reduced over the
   trees; a target no tree reaches gives 0, as onnxruntime); plus base_values (regressor);
4. post_transform: NONE, LOGISTIC (sigmoid), SOFTMAX, SOFTMAX_ZERO (softmax over the
   non-zero scores, zeros stay 0). TreeEnsemble's integer codes follow the ONNX spec
   (1 = SOFTMAX, 2 = LOGISTIC); onnxruntime reads them in its own enum order (swapped).
   Base values are added to every target, also one no tree reaches (the spec and the
   ONNX reference; onnxruntime leaves such a target at 0).
X is compared in its own type (float32/float16; int32/int64 regressor inputs as float32),
the scores are float32 (TreeEnsemble returns X's type).
TreeEnsembleClassifier: summed class weights (+ base_values, post_transform) as the scores;
the label is the int64 class label of the largest raw score (first on ties) among the
classes that have a score, as onnxruntime.
Restrictions: post_transform PROBIT is not supported (no erfinv in WebNN); X must be 2-D
(a 1-D X is one row); float64 X is not a WebNN type; TreeEnsembleClassifier: multiclass (3+
classes) with classlabels_int64s only (binary models follow onnxruntime-specific rules, and
string labels have no WebNN type).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import require_attrs
from op_mappings.onnx import onnx_op

ML = "ai.onnx.ml"
_MODES = ("LEQ", "LT", "GTE", "GT", "EQ", "NEQ", "MEMBER")
_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


@dataclass
class Split:
    feature: int
    mode: str
    value: float | tuple[float, ...]
    missing_true: bool


@dataclass
class Path:
    conds: list[tuple[int, bool]]
    """(split index, required outcome) from the root down."""
    outputs: list[tuple[int, float]]
    """(target, weight) of the leaf."""


@dataclass
class Ensemble:
    splits: list[Split] = field(default_factory=list)
    trees: list[list[Path]] = field(default_factory=list)
    n_targets: int = 1
    aggregate: str = "SUM"
    post_transform: str = "NONE"
    base_values: list[float] | None = None


def _arr(a: Mapping[str, Any], name: str, tensor_name: str | None = None) -> np.ndarray | None:
    if tensor_name and a.get(tensor_name) is not None:
        return np.asarray(a[tensor_name]).reshape(-1)
    value = a.get(name)
    if value is None or (isinstance(value, tuple | list) and not value):
        return None
    return np.asarray(value).reshape(-1)


def _walk(root: int, is_leaf: bool, children: Any, leaf_outputs: Any, max_depth: int
          ) -> list[Path]:
    """Depth-first paths of one tree. `children(i)` -> ((true id, true is leaf), (false id,
    false is leaf)); `leaf_outputs(i)` -> [(target, weight)]."""
    paths: list[Path] = []
    stack: list[tuple[int, bool, list[tuple[int, bool]]]] = [(root, is_leaf, [])]
    while stack:
        node, leaf, conds = stack.pop()
        if leaf:
            paths.append(Path(conds, leaf_outputs(node)))
            continue
        if len(conds) > max_depth:
            raise InvalidModel("tree is deeper than its number of nodes (a cycle)")
        (t, t_leaf), (f, f_leaf) = children(node)
        stack.append((f, f_leaf, [*conds, (node, False)]))
        stack.append((t, t_leaf, [*conds, (node, True)]))
    return paths


def ensemble_v5(a: Mapping[str, Any]) -> Ensemble:
    """The TreeEnsemble (ai.onnx.ml 5) attributes as an Ensemble."""
    splits = np.asarray(a["nodes_splits"]).reshape(-1)
    feats = [int(v) for v in a["nodes_featureids"]]
    modes = [int(v) for v in np.asarray(a["nodes_modes"]).reshape(-1)]
    true_ids = [int(v) for v in a["nodes_truenodeids"]]
    false_ids = [int(v) for v in a["nodes_falsenodeids"]]
    true_leaf = [bool(v) for v in a["nodes_trueleafs"]]
    false_leaf = [bool(v) for v in a["nodes_falseleafs"]]
    n = len(feats)
    if not all(len(v) == n for v in (splits, modes, true_ids, false_ids, true_leaf,
                                       false_leaf)):
        raise InvalidModel("TreeEnsemble nodes_* attributes have different lengths")
    tracks = _arr(a, "nodes_missing_value_tracks_true")
    missing = [bool(v) for v in tracks] if tracks is not None else [False] * n
    members = _arr(a, "membership_values")
    member_iter = iter([] if members is None else [float(v) for v in members])
    ens = Ensemble(n_targets=int(a["n_targets"]),
                   aggregate=_AGGREGATES[int(a.get("aggregate_function", 1))],
                   post_transform=_TRANSFORMS[int(a.get("post_transform", 0))])
    for i in range(n):
        if not 0 <= modes[i] < len(_MODES):
            raise InvalidModel(f"TreeEnsemble nodes_modes[{i}] = {modes[i]} is unknown")
        mode = _MODES[modes[i]]
        value: float | tuple[float, ...] = float(splits[i])
        if mode == "MEMBER":
            vals = []
            for v in member_iter:
                if np.isnan(v):
                    break
                vals.append(v)
            value = tuple(vals)
        ens.splits.append(Split(feats[i], mode, value, missing[i]))
    leaf_targets = [int(v) for v in a["leaf_targetids"]]
    leaf_weights = np.asarray(a["leaf_weights"]).reshape(-1)
    if len(leaf_targets) != len(leaf_weights):
        raise InvalidModel("TreeEnsemble leaf_targetids and leaf_weights differ in length")

    def children(i: int) -> tuple[tuple[int, bool], tuple[int, bool]]:
        return (true_ids[i], true_leaf[i]), (false_ids[i], false_leaf[i])

    def leaf(i: int) -> list[tuple[int, float]]:
        if not 0 <= i < len(leaf_targets):
            raise InvalidModel(f"TreeEnsemble leaf index {i} is out of range")
        return [(leaf_targets[i], float(leaf_weights[i]))]

    for root in (int(v) for v in a["tree_roots"]):
        degenerate = true_leaf[root] and false_leaf[root] and true_ids[root] == false_ids[root]
        if degenerate:  # the tree is one leaf
            ens.trees.append([Path([], leaf(true_ids[root]))])
        else:
            ens.trees.append(_walk(root, False, children, leaf, n))
    return ens


_V1_NODES = ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
             "nodes_truenodeids", "nodes_falsenodeids")
"""The attributes a TreeEnsembleRegressor / TreeEnsembleClassifier cannot do without."""


def ensemble_v1(a: Mapping[str, Any], op: str, targets: tuple[str, str, str, str]
                ) -> Ensemble:
    """TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml 1, 3) tree attributes;
    `targets` names the (tree ids, node ids, target ids, weights) attributes."""
    tree_ids = [int(v) for v in a["nodes_treeids"]]
    node_ids = [int(v) for v in a["nodes_nodeids"]]
    feats = [int(v) for v in a["nodes_featureids"]]
    modes = [str(v) for v in a["nodes_modes"]]
    values = _arr(a, "nodes_values", "nodes_values_as_tensor")
    true_ids = [int(v) for v in a["nodes_truenodeids"]]
    false_ids = [int(v) for v in a["nodes_falsenodeids"]]
    n = len(node_ids)
    if values is None:
        values = np.zeros(n)
    tracks = _arr(a, "nodes_missing_value_tracks_true")
    missing = [bool(v) for v in tracks] if tracks is not None else [False] * n
    if not all(len(v) == n for v in (tree_ids, feats, modes, values, true_ids, false_ids)):
        raise InvalidModel(f"{op} nodes_* attributes have different lengths")
    index = {(t, i): k for k, (t, i) in enumerate(zip(tree_ids, node_ids, strict=True))}
    ens = Ensemble()
    for k in range(n):
        mode = modes[k]
        if mode == "LEAF":
            ens.splits.append(Split(0, "LEAF", 0.0, False))
            continue
        if not mode.startswith("BRANCH_") or mode[7:] not in _MODES[:6]:
            raise UnsupportedAttribute(f"{op} nodes_modes {mode!r} is not supported")
        ens.splits.append(Split(feats[k], mode[7:], float(values[k]), missing[k]))
    t_tree, t_node, t_id, t_w = targets
    tw = _arr(a, t_w, t_w + "_as_tensor")
    columns = [a.get(t_tree, ()), a.get(t_node, ()), a.get(t_id, ()), [] if tw is None else tw]
    if len({len(c) for c in columns}) > 1:
        raise InvalidModel(f"{op} {t_tree}, {t_node}, {t_id} and {t_w} have different "
                           f"lengths {[len(c) for c in columns]}")
    outputs: dict[int, list[tuple[int, float]]] = {}
    for tr, nd, tid, w in zip(*columns, strict=True):
        key = index.get((int(tr), int(nd)))
        if key is None:
            raise InvalidModel(f"{op} {t_node} ({tr}, {nd}) names no node")
        outputs.setdefault(key, []).append((int(tid), float(w)))

    def resolve(tree: int, node_id: int) -> tuple[int, bool]:
        key = index.get((tree, node_id))
        if key is None:
            raise InvalidModel(f"{op} tree {tree} has no node {node_id}")
        return key, modes[key] == "LEAF"

    trees: dict[int, list[int]] = {}
    for k, t in enumerate(tree_ids):
        trees.setdefault(t, []).append(k)
    for tree, members in trees.items():
        referenced = set()
        for k in members:
            if modes[k] != "LEAF":
                referenced.add(resolve(tree, true_ids[k])[0])
                referenced.add(resolve(tree, false_ids[k])[0])
        roots = [k for k in members if k not in referenced]
        if len(roots) != 1:
            raise InvalidModel(f"{op} tree {tree} has {len(roots)} root nodes")

        def children(k: int, tree: int = tree) -> tuple[tuple[int, bool], tuple[int, bool]]:
            return resolve(tree, true_ids[k]), resolve(tree, false_ids[k])

        ens.trees.append(_walk(roots[0], modes[roots[0]] == "LEAF", children,
                               lambda k: outputs.get(k, []), n))
    return ens


def _const(ctx: ImportContext, value: Any, dtype: str = "float32") -> Any:
    return ctx.constant(np.asarray(value, dtype=dtype))


def _conditions(ctx: ImportContext, x: Any, ens: Ensemble, used: list[int]) -> tuple[Any, dict[
        int, int]]:
    """float32 [B, len(used)] 0/1 conditions of the used split nodes (grouped by mode) and
    each split's column."""
    b = ctx.builder
    dt = x.data_type
    columns: dict[int, int] = {}
    parts = []
    for mode in _MODES:
        group = [i for i in used if ens.splits[i].mode == mode]
        if not group:
            continue
        feats = _const(ctx, [ens.splits[i].feature for i in group], "int32")
        xm = b.gather(x, feats, axis=1)  # [B, n]
        if mode == "MEMBER":
            width = max([1, *(len(v) for i in group if isinstance(v := ens.splits[i].value,
                                                                  tuple))])
            table = np.full((1, len(group), width), np.nan)
            for j, i in enumerate(group):
                vals = ens.splits[i].value
                assert isinstance(vals, tuple)
                table[0, j, :len(vals)] = vals
            hit = b.equal(b.reshape(xm, [*xm.shape, 1]), _const(ctx, table, dt))
            cond = b.greater(b.reduce_max(b.cast(hit, "float32"), axes=[2]), _const(ctx, 0.0))
        else:
            split = _const(ctx, [[ens.splits[i].value for i in group]], dt)
            fn = {"LEQ": b.lesser_or_equal, "LT": b.lesser, "GTE": b.greater_or_equal,
                  "GT": b.greater, "EQ": b.equal, "NEQ": b.not_equal}[mode]
            cond = fn(xm, split)
        track = np.array([[ens.splits[i].missing_true for i in group]])
        if track.any():
            nan = b.is_nan(xm)
            if not track.all():
                nan = b.logical_and(nan, ctx.constant(track.astype(np.uint8)))
            cond = b.logical_or(cond, nan)
        for i in group:
            columns[i] = len(columns)
        parts.append(b.cast(cond, "float32"))
    cond_all = parts[0] if len(parts) == 1 else b.concat(parts, axis=1)
    return cond_all, columns


def scores(ctx: ImportContext, node: Node, x: Any, ens: Ensemble) -> Any:
    """float32 [B, n_targets] scores of the ensemble (aggregated, base values, transform)."""
    return transform(ctx, raw_scores(ctx, node, x, ens)[0], ens.post_transform)


def raw_scores(ctx: ImportContext, node: Node, x: Any, ens: Ensemble) -> tuple[Any, Any]:
    """(float32 [B, n_targets] aggregated scores plus base values, before post_transform;
    bool [B, n_targets]: whether any tree's leaf gives the target a weight)."""
    b = ctx.builder
    if ens.post_transform == "PROBIT":
        raise UnsupportedAttribute(f"{node.op_type} post_transform PROBIT is not supported "
                                   "(WebNN has no erfinv)")
    if not ens.trees:
        raise InvalidModel(f"{node.op_type} has no trees")
    if x.data_type not in FLOAT_TYPES:
        x = b.cast(x, "float32")
    if x.rank == 1:
        x = b.reshape(x, [1, x.shape[0]])
    if x.rank != 2:
        raise UnsupportedAttribute(f"{node.op_type} X must be [N, F], got rank {x.rank}")
    batch, n_feat = x.shape
    nt = ens.n_targets
    for i, s in enumerate(ens.splits):
        if s.mode != "LEAF" and not 0 <= s.feature < n_feat:
            raise InvalidModel(f"{node.op_type} node {i} reads feature {s.feature} of "
                               f"{n_feat}")
    for tree in ens.trees:
        for path in tree:
            for target, _ in path.outputs:
                if not 0 <= target < nt:
                    raise InvalidModel(f"{node.op_type} target {target} is out of range "
                                       f"(n_targets {nt})")
    tree_nodes = [sorted({i for p in tree for i, _ in p.conds}) for tree in ens.trees]
    used = sorted({i for nodes in tree_nodes for i in nodes})
    n_trees = len(ens.trees)
    n_t = max([1, *(len(v) for v in tree_nodes)])
    p_t = max(len(tree) for tree in ens.trees)
    gather_idx = np.zeros((n_trees, n_t), dtype=np.int32)
    m = np.zeros((n_trees, n_t, p_t), dtype=np.float32)
    need = np.full((n_trees, 1, p_t), -1.0, dtype=np.float32)
    weights = np.zeros((n_trees, p_t, nt), dtype=np.float64)
    present = np.zeros((n_trees, p_t, nt), dtype=np.float32)
    columns: dict[int, int] = {}
    if used:
        cond, columns = _conditions(ctx, x, ens, used)
    for t, (tree, nodes) in enumerate(zip(ens.trees, tree_nodes, strict=True)):
        row = {i: r for r, i in enumerate(nodes)}
        for r, i in enumerate(nodes):
            gather_idx[t, r] = columns[i]
        for p, path in enumerate(tree):
            need[t, 0, p] = sum(1 for _, want in path.conds if want)
            for i, want in path.conds:
                m[t, row[i], p] = 1.0 if want else -1.0
            for target, w in path.outputs:
                weights[t, p, target] += w
                present[t, p, target] = 1.0
    if used:
        ct = b.gather(cond, _const(ctx, gather_idx.reshape(-1), "int32"), axis=1)
        ct = b.transpose(b.reshape(ct, [batch, n_trees, n_t]), permutation=[1, 0, 2])
        hits = b.matmul(ct, _const(ctx, m))  # [T, B, P]
        taken = b.cast(b.equal(hits, _const(ctx, need)), "float32")
    else:  # every tree is one leaf
        taken = b.expand(_const(ctx, (need == 0).astype(np.float32)), [n_trees, batch, p_t])
    if ens.aggregate in ("SUM", "AVERAGE"):
        flat = b.reshape(b.transpose(taken, permutation=[1, 0, 2]), [batch, n_trees * p_t])
        y = b.matmul(flat, _const(ctx, weights.reshape(n_trees * p_t, nt)))
        reached = b.greater(b.matmul(flat, _const(ctx, present.reshape(n_trees * p_t, nt))),
                            _const(ctx, 0.0))
        if ens.aggregate == "AVERAGE":
            y = b.div(y, _const(ctx, float(n_trees)))
    else:
        vt = b.matmul(taken, _const(ctx, weights))  # [T, B, nt]
        hit = b.greater(b.matmul(taken, _const(ctx, present)), _const(ctx, 0.0))
        inf = np.inf if ens.aggregate == "MIN" else -np.inf
        masked = b.where(hit, vt, _const(ctx, inf))
        red = (b.reduce_min if ens.aggregate == "MIN" else b.reduce_max)(masked, axes=[0])
        reached = b.greater(b.reduce_max(b.cast(hit, "float32"), axes=[0]), _const(ctx, 0.0))
        y = b.where(reached, red, _const(ctx, 0.0))
    if ens.base_values:
        if len(ens.base_values) != nt:
            raise InvalidModel(f"{node.op_type} has {len(ens.base_values)} base_values for "
                               f"{nt} targets")
        y = b.add(y, _const(ctx, [ens.base_values]))
    return y, reached


def transform(ctx: ImportContext, y: Any, post: str) -> Any:
    b = ctx.builder
    if post == "NONE":
        return y
    if post == "LOGISTIC":
        return b.sigmoid(y)
    if post == "SOFTMAX":
        return b.softmax(y, axis=1)
    if post == "SOFTMAX_ZERO":
        nonzero = b.greater(b.abs(y), _const(ctx, 1e-7))
        top = b.reduce_max(y, axes=[1], keep_dimensions=True)
        e = b.where(nonzero, b.exp(b.sub(y, top)), _const(ctx, 0.0))
        return b.div(e, b.reduce_sum(e, axes=[1], keep_dimensions=True))
    raise UnsupportedAttribute(f"post_transform {post} is not supported")


@onnx_op("TreeEnsemble", since=5, domain=ML)
def tree_ensemble(ctx: ImportContext, node: Node) -> Outputs:
    """X float32/float16 [N, F]; post_transform codes as in the ONNX spec (1 = SOFTMAX,
    2 = LOGISTIC), PROBIT is not supported (no erfinv in WebNN); MIN/MAX give 0 for a target
    no tree reaches."""
    x = ctx.operand(node.inputs[0])
    require_attrs(node, "nodes_splits", "nodes_featureids", "nodes_modes", "nodes_truenodeids",
                  "nodes_falsenodeids", "nodes_trueleafs", "nodes_falseleafs", "leaf_targetids",
                  "leaf_weights", "tree_roots", "n_targets")
    y = scores(ctx, node, x, ensemble_v5(node.attrs))
    return [ctx.builder.cast(y, x.data_type) if x.data_type != "float32" else y]


def _base_values(a: Mapping[str, Any]) -> list[float] | None:
    base = _arr(a, "base_values", "base_values_as_tensor")
    return None if base is None else [float(v) for v in base]


@onnx_op("TreeEnsembleRegressor", since=1, domain=ML)
def tree_ensemble_regressor(ctx: ImportContext, node: Node) -> Outputs:
    """X float32/float16/int32/int64 [N, F] or [F] (integers compared as float32); base
    values are added to every target; post_transform PROBIT is not supported."""
    a = node.attrs
    require_attrs(node, *_V1_NODES)
    ens = ensemble_v1(a, node.op_type, ("target_treeids", "target_nodeids", "target_ids",
                                        "target_weights"))
    ens.n_targets = int(a.get("n_targets", 1) or 1)
    ens.aggregate = str(a.get("aggregate_function", "SUM"))
    ens.post_transform = str(a.get("post_transform", "NONE"))
    if ens.aggregate not in _AGGREGATES or ens.post_transform not in _TRANSFORMS:
        raise UnsupportedAttribute(f"{node.op_type} aggregate_function {ens.aggregate!r} or "
                                   f"post_transform {ens.post_transform!r} is unknown")
    ens.base_values = _base_values(a)
    return [scores(ctx, node, ctx.operand(node.inputs[0]), ens)]


@onnx_op("TreeEnsembleClassifier", since=1, domain=ML)
def tree_ensemble_classifier(ctx: ImportContext, node: Node) -> Outputs:
    """Multiclass only: 3 or more classlabels_int64s (no binary models, no string labels);
    post_transform PROBIT is not supported. The label is the class of the largest raw score
    (the first on ties) among the classes that have a score, as onnxruntime does."""
    a = node.attrs
    b = ctx.builder
    labels = a.get("classlabels_int64s")
    if a.get("classlabels_strings"):
        raise UnsupportedAttribute("TreeEnsembleClassifier with string class labels is not "
                                   "supported (WebNN has no strings)")
    if labels is None or len(labels) < 3:
        raise UnsupportedAttribute(
            "TreeEnsembleClassifier with fewer than 3 classes (binary classification) is not "
            "supported; only multiclass models with classlabels_int64s are")
    require_attrs(node, *_V1_NODES)
    ens = ensemble_v1(a, node.op_type, ("class_treeids", "class_nodeids", "class_ids",
                                        "class_weights"))
    ens.n_targets = len(labels)
    ens.post_transform = str(a.get("post_transform", "NONE"))
    if ens.post_transform not in _TRANSFORMS:
        raise UnsupportedAttribute(f"{node.op_type} post_transform {ens.post_transform!r} is "
                                   "unknown")
    ens.base_values = _base_values(a)
    raw, reached = raw_scores(ctx, node, ctx.operand(node.inputs[0]), ens)
    if not ens.base_values:
        raw_for_label = b.where(reached, raw, _const(ctx, -np.inf))
    else:
        raw_for_label = raw
    index = b.arg_max(raw_for_label, 1, output_data_type="int32")
    label = b.gather(_const(ctx, [int(v) for v in labels], "int64"), index, axis=0)
    return [label, transform(ctx, raw, ens.post_transform)]
