"""tools/targets/chromium_limits: the transcription of Blink's `opSupportLimits()` mapping
(`ROLES`) checked against a real browser (the shipped chromium-tflite/limits.json is Chromium
153's own output): every op and role it reports is produced, and roles that read one
`DataTypeLimits` field hold one value there; the shipped chromium-dml / chromium-coreml
limits.json are exactly what the generator writes."""

from __future__ import annotations

import json
from pathlib import Path

from converter.passes.targets import TARGETS_DIR
from tools.targets import chromium_limits as cl

REAL = json.loads((TARGETS_DIR / "chromium-tflite" / "limits.json").read_text(encoding="utf-8"))
TOP = ("input", "constant", "output", "preferredInputLayout", "maxTensorByteLength")


def test_roles_are_those_the_real_browser_reports() -> None:
    ops = {k for k in REAL if k not in TOP}
    assert ops == set(cl.ROLES)
    for op, roles in cl.ROLES.items():
        assert set(roles) == set(REAL[op]), op


def test_roles_reading_one_field_agree_in_the_real_browser() -> None:
    uses: dict[str, set[str]] = {}
    for op, roles in cl.ROLES.items():
        for role, field in roles.items():
            uses.setdefault(field, set()).add(json.dumps(REAL[op][role], sort_keys=True))
    assert {f: v for f, v in uses.items() if len(v) > 1} == {}


def test_logical_outputs_take_their_inputs_ranks_in_the_real_browser() -> None:
    for op, roles in cl.ROLES.items():
        for role, field in roles.items():
            if field.startswith(cl.LOGICAL):
                first = "a"
                assert REAL[op][role]["rankRange"] == REAL[op][first]["rankRange"], op
                assert REAL[op][role]["dataTypes"] == ["uint8"], op


def test_data_types_are_listed_in_enum_order_like_the_browser() -> None:
    for op in (k for k in REAL if k not in TOP[3:]):
        for limits in ([REAL[op]] if op in TOP else REAL[op].values()):
            types = limits["dataTypes"]
            assert types == [d for d in cl.ENUM_ORDER if d in types], op


def test_shipped_profiles_are_the_generator_output(tmp_path: Path) -> None:
    assert cl.main([str(tmp_path)]) == 0
    for name in cl.PROFILES:
        made = json.loads((tmp_path / name / "limits.json").read_text(encoding="utf-8"))
        shipped = json.loads((TARGETS_DIR / name / "limits.json").read_text(encoding="utf-8"))
        assert made == shipped, name


def test_feature_level_upgrades_are_applied() -> None:
    dml = cl.dml_fields()
    # DML_FEATURE_LEVEL_5_1 sets resample2d's ranks to UpTo(4), 6.2 its data types.
    assert dml["resample2d_input"] == (cl.DML_F_INTS8, 0, 4)
    assert dml["input"][0] == cl.ALL and dml["div_input"][0] == cl.ALL8
    coreml = cl.coreml_fields()
    assert "int4" in coreml["dequantize_linear_input"][0]
    assert coreml["arg_min_max_input"][1:] == (1, 5)
