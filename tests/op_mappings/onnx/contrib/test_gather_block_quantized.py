"""com.microsoft GatherBlockQuantized vs onnxruntime's CPU kernel: int4/uint4 tables (any
quantize / gather axis, partial last blocks), uint8 tables with bits 4 (packed along the last
axis, packed zero points) and 8, default and given zero points, float32/float16 scales,
negative and out-of-range indices (zeros), constant and runtime indices. The table must stay
a 4-bit constant in the converted graph."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.op_mappings.onnx.contrib.oracle import expect_error
from tests.op_mappings.onnx.contrib.quant_oracle import MS, model, pack_bits, run_compare
from tests.op_mappings.onnx.harness import run_ort, statuses
from tests.optional import backend_params

NP4 = {"int4": helper.tensor_dtype_to_np_dtype(TensorProto.INT4),
       "uint4": helper.tensor_dtype_to_np_dtype(TensorProto.UINT4)}
RANGE = {"int4": (-8, 7), "uint4": (0, 15)}


def _case(shape: tuple[int, ...], qtype: str, qa: int, ga: int, block: int, zp: bool,
          indices: np.ndarray, dtype: str = "float32", const_idx: bool = False, seed: int = 0,
          bits: int = 4) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    rank = len(shape)
    qa_n = qa % rank
    if qtype == "uint8":
        values = rng.integers(0, 2**bits, shape)
        data = pack_bits(values, bits) if bits == 4 else values.astype(np.uint8)
    else:
        data = rng.integers(*RANGE[qtype], shape, endpoint=True).astype(NP4[qtype])
    sshape = list(shape)
    sshape[qa_n] = -(-shape[qa_n] // block)
    inits: dict[str, Any] = {"data": data,
                             "scales": rng.uniform(0.01, 0.5, sshape).astype(dtype)}
    names = ["data", "indices", "scales"]
    if zp:
        if qtype == "uint8":
            z = rng.integers(0, 2**bits, sshape)
            inits["zp"] = pack_bits(z, bits) if bits == 4 else z.astype(np.uint8)
        else:
            inits["zp"] = rng.integers(*RANGE[qtype], sshape, endpoint=True).astype(NP4[qtype])
        names.append("zp")
    feeds = {}
    if const_idx:
        inits["indices"] = indices
    else:
        feeds["indices"] = indices
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain=MS, quantize_axis=qa,
                            gather_axis=ga, block_size=block, bits=bits)
    return model([node], feeds, inits), feeds


def _check(m: onnx.ModelProto, feeds: dict[str, np.ndarray], qtype: str,
           backends: tuple[str, ...] = ("reference",), tol: float = 0.0) -> None:
    res = run_compare(m, feeds, run_ort(m, feeds), "GatherBlockQuantized", tol, tol, backends)
    if not feeds:  # constant indices: the whole node folds to its (small) float result
        assert statuses(res)["com.microsoft::GatherBlockQuantized"] == ["folded"]
        return
    bits = {a.name: a.i for a in m.graph.node[0].attribute}["bits"]
    four_bit = "uint4" if qtype == "uint8" and bits == 4 else qtype
    table = [c for c in res.graph.constants if c.data_type in ("int4", "uint4", "uint8") and
             c.value is not None and c.value.size > 16]
    assert table and table[0].data_type == four_bit


IDX = np.array([[0, 3], [-1, 2]], np.int64)


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
@pytest.mark.parametrize(("shape", "qa", "ga"), [
    ((6, 64), 1, 0), ((64, 6), 0, 1), ((64, 6), 0, 0), ((6, 40), -1, 0),
    ((2, 5, 32), 2, 1), ((2, 32, 5), 1, 2)])
@pytest.mark.parametrize("zp", [False, True])
def test_4bit_tables(qtype: str, shape: tuple[int, ...], qa: int, ga: int, zp: bool) -> None:
    m, feeds = _case(shape, qtype, qa, ga, 16, zp, IDX, seed=len(shape) + qa)
    _check(m, feeds, qtype)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zp", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_uint8_tables(bits: int, zp: bool, dtype: str) -> None:
    m, feeds = _case((10, 64), "uint8", -1, 0, 32, zp, np.array([1, -3, 9], np.int32),
                     dtype=dtype, bits=bits, seed=bits)
    _check(m, feeds, "uint8")


@pytest.mark.parametrize("const_idx", [False, True])
def test_out_of_range_indices_give_zeros(const_idx: bool) -> None:
    idx = np.array([[0, 6, -7], [5, -6, 100]], np.int64)
    m, feeds = _case((6, 32), "int4", 1, 0, 16, True, idx, const_idx=const_idx)
    _check(m, feeds, "int4")
    assert not run_ort(m, feeds)["y"][0, 1].any()


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
def test_float16_and_backends(backend: str) -> None:
    m, feeds = _case((8, 64), "uint4", 1, 0, 32, True, np.array([7, 0, -2], np.int32),
                     dtype="float16", seed=3)
    _check(m, feeds, "uint4", backends=(backend,))
    m, feeds = _case((8, 64), "int4", 1, 0, 16, False, np.array([[9, 0, -2]], np.int64), seed=4)
    if backend != "reference":
        _check(m, feeds, "int4", backends=(backend,))


def _bad(**kw: Any) -> onnx.ModelProto:
    args: dict[str, Any] = {"shape": (6, 64), "qtype": "int4", "qa": 1, "ga": 0, "block": 16,
                            "zp": False, "indices": IDX}
    attrs = kw.pop("attrs", {})
    args.update(kw)
    m, _ = _case(**args)
    for name, value in attrs.items():
        for a in m.graph.node[0].attribute:
            if a.name == name:
                a.i = value
    return m


@pytest.mark.parametrize(("m", "reason", "fragment"), [
    (_bad(attrs={"block_size": 24}), "invalid_model", "block_size must be a power of two"),
    (_bad(attrs={"bits": 8}), "invalid_model", "int4 data needs bits=4"),
    (_bad(attrs={"bits": 3}), "invalid_model", "bits must be 4 or 8"),
    (_bad(attrs={"quantize_axis": 2}), "invalid_model", "quantize_axis 2 is out of range"),
    (_bad(qtype="uint8", ga=1, qa=1, shape=(6, 64)), "invalid_model",
     "needs gather_axis 0 and quantize_axis 1"),
    (_bad(attrs={"block_size": 32}), "invalid_model", "scales have shape [6, 4], expected [6, 2]"),
])
def test_malformed(m: onnx.ModelProto, reason: str, fragment: str) -> None:
    expect_error(m, reason, fragment)


@pytest.mark.parametrize(("cols", "zp", "as_is"), [(128, True, True), (128, False, True),
                                                   (96, True, False), (96, False, True),
                                                   (80, True, False)])
def test_uint8_4bit_bytes_used_as_they_are(cols: int, zp: bool, as_is: bool) -> None:
    """uint8 data with bits 4 in whole blocks: the table constant's packed bytes are the
    data's unchanged (zero points too when each row is whole bytes); an odd block count
    with zero points (padding nibbles) or a partial block unpacks them. Values against
    onnxruntime either way."""
    m, feeds = _case((10, cols), "uint8", -1, 0, 32, zp, np.array([1, -3, 9], np.int32),
                     seed=cols)
    res = run_compare(m, feeds, run_ort(m, feeds), "GatherBlockQuantized", 0.0, 0.0)
    inits = {t.name: t for t in m.graph.initializer}
    [table] = [c for c in res.graph.constants if c.data_type == "uint4" and c.shape[0] == 10
               and c.shape[-1] >= cols]
    assert (table.packed is not None) == as_is
    if as_is:
        assert table.packed is not None and table.packed.tobytes() == inits["data"].raw_data
        if zp:
            [z] = [c for c in res.graph.constants if c.data_type == "uint4" and
                   c.shape == (10, cols // 32)]
            assert z.packed is not None and z.packed.tobytes() == inits["zp"].raw_data
