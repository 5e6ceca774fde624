"""op_support_limits() is generated from the same table the builder validates with: check it
op by op, role by role and data type by data type against real builder calls."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand, MLTypeError
from converter.core.webnn.dtypes import DATA_TYPES, FOUR_BIT_TYPES
from converter.core.webnn.limits import OP_LIMITS
from tests.converter.core.webnn.limit_samples import Sample

OUTPUT_ROLES = {"output", "outputs", "output0", "output1", "output2"}


def _all_samples() -> dict[str, Sample]:
    samples: dict[str, Sample] = {}
    ops_dir = Path(__file__).parent / "ops"
    for mod in pkgutil.iter_modules([str(ops_dir)]):
        if mod.name.startswith("test_"):
            module = importlib.import_module(f"tests.converter.core.webnn.ops.{mod.name}")
            samples.update(getattr(module, "SAMPLES", {}))
    return samples


SAMPLES = _all_samples()


def _groups(op: str) -> list[tuple[str, ...]]:
    roles = [r for r in OP_LIMITS[op] if r not in OUTPUT_ROLES]
    grouped = [tuple(g) for g in SAMPLES[op].groups]
    named = {r for g in grouped for r in g}
    return grouped + [(r,) for r in roles if r not in named]


def _default_types(op: str) -> dict[str, str]:
    types = {}
    for group in _groups(op):
        allowed = [t for t in DATA_TYPES if all(t in OP_LIMITS[op][r].data_types for r in group)]
        for r in group:
            types[r] = allowed[0]
    return types


def test_every_op_has_a_sample() -> None:
    assert sorted(set(OP_LIMITS) - set(SAMPLES)) == []


def test_spec_structure() -> None:
    limits = ML().create_context().op_support_limits()
    assert limits["preferredInputLayout"] in ("nchw", "nhwc")
    assert set(limits["input"]["dataTypes"]) == set(DATA_TYPES)
    # the reference backend's graphs may output the 4-bit types too (output_data_types)
    assert set(limits["output"]["dataTypes"]) == set(DATA_TYPES) | set(FOUR_BIT_TYPES)
    assert set(limits["constant"]["dataTypes"]) == set(DATA_TYPES) | set(FOUR_BIT_TYPES)
    assert set(OP_LIMITS) <= set(limits)
    assert limits["gru"]["output1"]["rankRange"] == {"min": 4, "max": 4}
    assert len(OP_LIMITS) == 95


CASES = [(op, group, t) for op in sorted(SAMPLES) if op in OP_LIMITS
         for group in _groups(op) for t in DATA_TYPES]


@pytest.mark.parametrize(("op", "group", "data_type"), CASES,
                         ids=[f"{o}-{'+'.join(g)}-{t}" for o, g, t in CASES])
def test_builder_accepts_exactly_the_limits(op: str, group: tuple[str, ...],
                                            data_type: str) -> None:
    types = _default_types(op) | {r: data_type for r in group}
    allowed = all(data_type in OP_LIMITS[op][r].data_types for r in group)
    b = MLGraphBuilder(ML().create_context())
    if allowed:
        result = SAMPLES[op].call(b, types)
        outs = result if isinstance(result, list) else [result]
        out_roles = [r for r in OP_LIMITS[op] if r in OUTPUT_ROLES]
        for i, out in enumerate(outs):
            assert isinstance(out, MLOperand)
            role = out_roles[min(i, len(out_roles) - 1)]
            assert out.data_type in OP_LIMITS[op][role].data_types
    else:
        with pytest.raises(MLTypeError, match=op):
            SAMPLES[op].call(b, types)


def test_four_bit_types_only_where_chromium_has_them() -> None:
    """int4/uint4: constants and the integer operands of dequantizeLinear / quantizeLinear,
    nowhere else (graph inputs and outputs cannot have them)."""
    limits = ML().create_context().op_support_limits()
    found = {(op, role) for op, roles in OP_LIMITS.items() for role, lim in roles.items()
             if set(FOUR_BIT_TYPES) & set(lim.data_types)}
    assert found == {("dequantizeLinear", "input"), ("dequantizeLinear", "zeroPoint"),
                     ("quantizeLinear", "zeroPoint"), ("quantizeLinear", "output")}
    for op, role in found:
        assert set(FOUR_BIT_TYPES) <= set(limits[op][role]["dataTypes"])
