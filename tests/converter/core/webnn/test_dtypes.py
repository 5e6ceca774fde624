"""The spec's MLNumber cast rules (section 1.7), checked against hand-derived values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from converter.core.webnn.dtypes import cast_array, cast_number


@pytest.mark.parametrize(("value", "dtype", "expected"), [
    (1.5, "int8", 2), (2.5, "int8", 2), (-2.5, "int8", -2), (300, "int8", 127),
    (-300.0, "uint8", 0), (float("nan"), "int32", 0), (float("inf"), "uint32", 2**32 - 1),
    (2**70, "int64", 2**63 - 1), (-(2**70), "uint64", 0), (2**64 + 5, "uint64", 2**64 - 1),
    (0.1, "float16", 0.0999755859375), (1e6, "float16", math.inf), (-1e39, "float32", -math.inf),
])
def test_cast_number(value: float, dtype: str, expected: float) -> None:
    assert cast_number(value, dtype) == expected


def test_cast_number_keeps_nan_and_negative_zero() -> None:
    assert math.isnan(cast_number(float("nan"), "float16"))
    assert math.copysign(1.0, cast_number(-0.0, "float32")) == -1.0


def test_cast_array_matches_scalar_rule() -> None:
    values = np.array([0.5, 1.5, -1.5, 1e10, -1e10, np.nan, 254.5])
    for dtype in ("int8", "uint8", "int32", "uint32", "int64", "uint64"):
        expected = [cast_number(float(v), dtype) for v in values]
        assert cast_array(values, dtype).tolist() == expected


def test_4bit_packing_matches_onnx() -> None:
    """Two values per byte, the first in the low nibble (onnx.helper packs INT4 tensors the
    same way); unpacking sign-extends int4 and drops the padding nibble of an odd count."""
    from onnx import TensorProto, helper

    from converter.core.webnn.dtypes import byte_length, pack_4bit, unpack_4bit

    values = np.array([-8, -1, 0, 7, 3], np.int8)
    packed = pack_4bit(values)
    onnx_bytes = bytes(helper.make_tensor("t", TensorProto.INT4, [5],
                                          values.tolist()).int32_data)
    assert packed == onnx_bytes == bytes([0xF8, 0x70, 0x03])
    assert byte_length("int4", 5) == 3 and byte_length("uint4", 4) == 2
    np.testing.assert_array_equal(unpack_4bit(packed, "int4", (5,)), values)
    u = np.arange(16, dtype=np.uint8).reshape(4, 4)
    assert unpack_4bit(pack_4bit(u), "uint4", (4, 4)).tolist() == u.tolist()
    with pytest.raises(ValueError, match="needs 3 packed bytes"):
        unpack_4bit(b"\x00\x00", "int4", (5,))


def test_4bit_types() -> None:
    from converter.core.webnn.dtypes import carrier_type, cast_number, numpy_dtype, type_range

    assert numpy_dtype("int4") == np.int8 and numpy_dtype("uint4") == np.uint8
    assert type_range("int4") == (-8, 7) and type_range("uint4") == (0, 15)
    assert cast_number(7.5, "int4") == 7 and cast_number(-2.5, "uint4") == 0
    assert carrier_type("int4") is None and carrier_type("int4", constant=True) == "int4"
