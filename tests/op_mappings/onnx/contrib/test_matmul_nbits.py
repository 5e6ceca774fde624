"""com.microsoft MatMulNBits vs onnxruntime: the node itself (CPU kernel) and, for every
case, a standard-op graph computing the operator's definition (Gather of per-column scales
and zero points, (q - zp)·scale, MatMul) in onnxruntime. The weight must stay a 4-bit
(uint4) constant in the converted graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import converter
from tests.op_mappings.onnx.contrib.oracle import expect_error
from tests.op_mappings.onnx.contrib.quant_oracle import MS, model, pack_bits, run_compare
from tests.op_mappings.onnx.harness import run_ort, statuses
from tests.optional import backend_params


class Case:
    """Random MatMulNBits inputs and both models (the node, the standard-op oracle)."""

    def __init__(self, *, n: int = 12, k: int = 64, bits: int = 4, block: int = 16,
                 zp: str | None = None, g_idx: str | None = None, bias: bool = False,
                 a_shape: tuple[int, ...] = (3,), dtype: str = "float32", seed: int = 0,
                 scales_1d: bool = False) -> None:
        rng = np.random.default_rng(seed)
        kb = -(-k // block)
        self.q = rng.integers(0, 2**bits, (n, kb * block))
        self.q[:, k:] = 0
        self.b = pack_bits(self.q, bits).reshape(n, kb, block * bits // 8)
        self.scales = rng.uniform(0.01, 0.1, (n, kb)).astype(dtype)
        inits: dict[str, np.ndarray] = {"B": self.b, "scales": self.scales.reshape(-1)
                                        if scales_1d else self.scales}
        ins = ["A", "B", "scales"]
        zq = np.full((n, kb), 2.0 ** (bits - 1))
        if zp == "uint8":
            zi = rng.integers(0, 2**bits, (n, kb))
            inits["zp"] = pack_bits(zi, bits)
            zq = zi.astype(np.float64)
        elif zp == "float":
            zf = rng.uniform(0, 2**bits - 1, (n, kb)).astype(dtype)
            inits["zp"] = zf
            zq = zf.astype(np.float64)
        ins.append("zp" if zp else "")
        self.groups = np.arange(k) // block
        if g_idx is not None:
            self.groups = rng.permutation(self.groups) if g_idx == "shuffled" else self.groups
            inits["g_idx"] = self.groups.astype(np.int32)
        ins.append("g_idx" if g_idx else "")
        if bias:
            inits["bias"] = rng.standard_normal(n).astype(dtype)
        ins.append("bias" if bias else "")
        while ins[-1] == "":
            ins.pop()
        node = helper.make_node("MatMulNBits", ins, ["y"], domain=MS, K=k, N=n, bits=bits,
                                block_size=block)
        self.a = rng.standard_normal((*a_shape, k)).astype(dtype)
        self.node_model = model([node], {"A": self.a}, inits)
        # the definition with standard ops: W[n, k] = (q - zp[n, g(k)]) * scale[n, g(k)]
        oracle_inits: dict[str, np.ndarray] = {"q": self.q[:, :k].astype(np.float32),
                        "s": self.scales.astype(np.float32), "z": zq.astype(np.float32),
                        "g": self.groups.astype(np.int64)}
        nodes = [helper.make_node("Cast", ["A"], ["a32"], to=onnx.TensorProto.FLOAT),
                 helper.make_node("Gather", ["s", "g"], ["sk"], axis=1),
                 helper.make_node("Gather", ["z", "g"], ["zk"], axis=1),
                 helper.make_node("Sub", ["q", "zk"], ["d"]),
                 helper.make_node("Mul", ["d", "sk"], ["w"]),
                 helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
                 helper.make_node("MatMul", ["a32", "wt"], ["mm"])]
        last = "mm"
        if bias:
            oracle_inits["bias32"] = inits["bias"].astype(np.float32)
            nodes.append(helper.make_node("Add", ["mm", "bias32"], ["mmb"]))
            last = "mmb"
        nodes.append(helper.make_node("Cast", [last], ["y"],
                                      to=onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))))
        self.oracle_model = model(nodes, {"A": self.a}, oracle_inits)


def _check(case: Case, *, node_oracle: bool = True, rtol: float = 1e-4, atol: float = 1e-4,
           backends: tuple[str, ...] = ("reference",)) -> None:
    feeds = {"A": case.a}
    expected = run_ort(case.oracle_model, feeds)
    res = run_compare(case.node_model, feeds, expected, "MatMulNBits(definition)", rtol, atol,
                      backends)
    if node_oracle:
        run_compare(case.node_model, feeds, run_ort(case.node_model, feeds), "MatMulNBits", rtol,
                    atol, backends)
    kinds = {c.data_type for c in res.graph.constants if c.value is not None and c.value.size ==
             case.q.size}
    assert kinds == {"uint4"} if case.b.shape[2] * 2 == case.q.shape[1] // case.b.shape[1] \
        else kinds == {"uint8"}
    assert statuses(res)["com.microsoft::MatMulNBits"] == ["decomposed"]


@pytest.mark.parametrize("block", [16, 32, 64, 128, 256])
@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zp", [None, "uint8"])
def test_blocks_bits_and_zero_points(block: int, bits: int, zp: str | None) -> None:
    _check(Case(k=256, bits=bits, block=block, zp=zp, bias=True, seed=block + bits))


@pytest.mark.parametrize("bias", [False, True])
def test_float_zero_points(bias: bool) -> None:
    """Float zero points (4 bits; onnxruntime's CPU kernel has none for 8 bits)."""
    _check(Case(zp="float", bias=bias, seed=3))
    _check(Case(zp="float", bits=8, bias=bias, seed=4), node_oracle=False)


@pytest.mark.parametrize("zp", [None, "float", "uint8"])
def test_g_idx_act_order(zp: str | None) -> None:
    """Shuffled groups (act-order): onnxruntime's kernel ignores packed uint8 zero points
    with g_idx, so those cases are checked against the definition only."""
    _check(Case(k=64, block=16, zp=zp, g_idx="shuffled", bias=True, seed=5),
           node_oracle=zp != "uint8")
    _check(Case(k=64, block=16, zp=zp, g_idx="default", seed=6), node_oracle=zp != "uint8")


def test_k_not_a_multiple_of_block_size_and_batched_a() -> None:
    _check(Case(k=40, block=16, zp="uint8", a_shape=(2, 3), bias=True, seed=7))
    _check(Case(k=40, block=32, a_shape=(), seed=8))
    _check(Case(k=40, block=16, zp="uint8", g_idx="shuffled", seed=9), node_oracle=False)
    _check(Case(k=64, block=16, scales_1d=True, seed=10))


def test_float16() -> None:
    _check(Case(dtype="float16", zp="uint8", bias=True, seed=11), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("backend", backend_params("onnxruntime", "torch"))
def test_backends(backend: str) -> None:
    _check(Case(k=128, block=32, zp="uint8", bias=True, a_shape=(2, 5), seed=12),
           backends=(backend,))
    _check(Case(k=128, block=32, zp="float", g_idx="shuffled", seed=13),
           backends=(backend,))


@pytest.mark.parametrize(("bits", "k", "zp"), [(4, 256, "uint8"), (4, 40, None),
                                              (8, 64, "uint8")])
def test_packed_bytes_are_used_as_they_are(tmp_path: Path, bits: int, k: int,
                                           zp: str | None) -> None:
    """B's bytes ([N, k_blocks, blob] uint8) are the graph's weight constant unchanged: a
    uint4 (or uint8) [N, k_blocks·block_size] constant whose packed bytes are B's (and the
    whole-byte packed zero points likewise), read from the file without a copy."""
    case = Case(k=k, bits=bits, block=16, zp=zp, seed=14)
    path = tmp_path / "m.onnx"
    onnx.save(case.node_model, str(path))
    res = converter.convert(str(path), target="spec")
    kb = case.b.shape[1]
    qtype = "uint4" if bits == 4 else "uint8"
    [weight] = [c for c in res.graph.constants if c.shape == (12, kb * 16)]
    assert weight.data_type == qtype
    data = weight.packed if bits == 4 else weight.value
    assert data is not None and data.tobytes() == case.b.tobytes()
    assert not data.flags.writeable and not data.flags.owndata
    if zp and bits * kb % 8 == 0:
        [zero] = [c for c in res.graph.constants if c.shape == (12, kb) and
                  c.data_type == qtype]
        z = zero.packed if bits == 4 else zero.value
        [given] = [t for t in case.node_model.graph.initializer if t.name == "zp"]
        assert z is not None and z.tobytes() == given.raw_data


def _node(k: int = 64, n: int = 4, bits: int = 4, block: int = 16, ins: int = 3,
          b_shape: tuple[int, ...] | None = None, a_k: int | None = None,
          **attrs: int) -> onnx.ModelProto:
    kb = -(-k // block)
    blob = block * bits // 8 if bits in (2, 4, 8) else 1
    inits: dict[str, np.ndarray] = {"B": np.zeros(b_shape or (n, kb, blob), np.uint8),
             "scales": np.ones((n, kb), np.float32), "zp": np.zeros((n, 1), np.uint8)}
    names = ["A", "B", "scales", "zp", "", ""][:ins]
    all_attrs: dict[str, Any] = {"K": k, "N": n, "bits": bits, "block_size": block, **attrs}
    node = helper.make_node("MatMulNBits", names, ["y"], domain=MS, **all_attrs)
    return model([node], {"A": np.zeros((2, a_k or k), np.float32)},
                 {k_: v for k_, v in inits.items() if k_ in names})


@pytest.mark.parametrize(("m", "reason", "fragment"), [
    (_node(ins=2), "invalid_model", "takes 3 to 6 inputs"),
    (_node(block=24), "invalid_model", "block_size must be a power of two >= 16"),
    (_node(block=8), "invalid_model", "block_size must be a power of two >= 16"),
    (_node(bits=3), "invalid_model", "bits must be 4 or 8"),
    (_node(bits=2), "unsupported_attribute", "bits=2 is not supported"),
    (_node(a_k=32), "invalid_model", "last dimension must be K=64"),
    (_node(b_shape=(4, 3, 8)), "invalid_model", "expected uint8[4, 4, 8]"),
    (_node(weight_prepacked=1), "unsupported_attribute", "weight_prepacked"),
])
def test_malformed(m: onnx.ModelProto, reason: str, fragment: str) -> None:
    expect_error(m, reason, fragment)
