"""Reading the operators of a TFLite subgraph into `ir.Node`s.

Operator code = max(builtin_code, deprecated_builtin_code); CUSTOM ops are named by their
`custom_code` and live in domain "custom" (`attrs["custom_options"]` holds the raw bytes).
Builtin options (and the `BuiltinOptions2` union) are decoded by `options`, which fills every
schema default, into plain dicts with the schema's snake_case field names; an operator
without an options table gets the defaults of its op's options type. Optional inputs (-1)
stay in place as "" in `Node.inputs` (None in `Node.input_infos`).

Checked here: tensor indices exist, an operator's options table is its op's own type
(`tables.options_class_for`), strides, dilations and pooling windows are at least 1 and a
padding is SAME or VALID.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from converter.core.ir import Node, TensorInfo
from converter.frontends.tflite import options as schema
from converter.frontends.tflite.model_file import ModelFile
from converter.frontends.tflite.options import OPTIONS2_NAMES, OPTIONS_NAMES
from converter.frontends.tflite.tables import CUSTOM_CODE, options_class_for

OperatorCode = tuple[int, str | None, int]
"""(builtin code, custom code or None, version) of one `OperatorCode` table."""


def read_operator(f: ModelFile, opcodes: Sequence[OperatorCode], s: int, k: int, op: Any,
                  tensors: Sequence[TensorInfo]) -> Node:
    """Operator `k` (accessor `op`) of subgraph `s` as a Node with its tensor records."""
    idx = int(op.OpcodeIndex())
    if not 0 <= idx < len(opcodes):
        raise f.fail(f"operator {k} of subgraph {s} uses operator code {idx}, the model "
                     f"has {len(opcodes)}")
    code, custom, version = opcodes[idx]
    if code == CUSTOM_CODE:
        op_type, domain = custom or "", "custom"
    else:
        op_type, domain = schema.builtin_name(code), ""
    ins = [int(i) for i in f.array(op.InputsAsNumpy, op.InputsLength(), "inputs", 4)]
    outs = [int(i) for i in f.array(op.OutputsAsNumpy, op.OutputsLength(), "outputs", 4)]
    for i in ins + outs:
        if not -1 <= i < len(tensors):
            raise f.fail(f"operator {k} ({op_type}) of subgraph {s} refers to tensor "
                         f"{i}, the subgraph has {len(tensors)}")
    if any(i < 0 for i in outs):
        raise f.fail(f"operator {k} ({op_type}) has an output index -1")
    attrs = _options(f, op, op_type, domain, k)
    bad = _bad_option(attrs)
    if bad:
        raise f.fail(f"operator {k} ({op_type}) of subgraph {s}: {bad}")
    if domain == "custom":
        attrs["custom_options"] = _custom_options(f, op)
        attrs["custom_options_format"] = int(op.CustomOptionsFormat())
    inter = f.array(op.IntermediatesAsNumpy, op.IntermediatesLength(), "intermediates", 4)
    if len(inter):
        attrs["intermediates"] = tuple(int(i) for i in inter)
    out_infos = tuple(tensors[i] for i in outs)
    first = out_infos[0].tensor_name if out_infos else ""
    name = first or f"{op_type}_{k}"
    return Node(op_type, domain, version, name,
                tuple(tensors[i].name if i >= 0 else "" for i in ins),
                tuple(t.name for t in out_infos), MappingProxyType(attrs), index=k,
                input_infos=tuple(tensors[i] if i >= 0 else None for i in ins),
                output_infos=out_infos)


def _options(f: ModelFile, op: Any, op_type: str, domain: str, k: int) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    found = False
    expected = options_class_for(op_type) if domain == "" else None
    for kind, table, names in ((int(op.BuiltinOptionsType()), op.BuiltinOptions(),
                                OPTIONS_NAMES),
                               (int(op.BuiltinOptions2Type()), op.BuiltinOptions2(),
                                OPTIONS2_NAMES)):
        if kind == 0 or table is None:
            continue
        cls_name = names.get(kind)
        decoded = None if cls_name is None else schema.decode(cls_name, table)
        if decoded is None:
            f.warnings.append(f"operator {k} ({op_type}): unknown options type "
                              f"{kind}{schema.unknown_options_note()}")
            continue
        if expected is not None and cls_name != expected:
            raise f.fail(f"operator {k} ({op_type}) carries options {cls_name}, not "
                         f"{expected}")
        attrs.update(decoded)
        found = True
    if not found and domain == "":
        cls_name = options_class_for(op_type)
        defaults = schema.defaults(cls_name) if cls_name else None
        if defaults is not None:
            attrs.update(defaults)
    return attrs


def _custom_options(f: ModelFile, op: Any) -> bytes:
    offset, size = int(op.LargeCustomOptionsOffset()), int(op.LargeCustomOptionsSize())
    if offset > 1:
        if offset + size > f.size:
            raise f.fail(f"custom options range offset={offset} size={size} lies "
                         "outside the file")
        return bytes(f.data[offset:offset + size])
    n = f.count(op.CustomOptionsLength(), "custom_options", 1)
    return bytes(op.CustomOptionsAsNumpy().tobytes()) if n else b""


_AT_LEAST_ONE = ("stride_h", "stride_w", "stride_d", "dilation_h_factor",
                 "dilation_w_factor", "dilation_d_factor", "filter_height", "filter_width")


def _bad_option(attrs: Mapping[str, Any]) -> str | None:
    """What is wrong with decoded options whose values no kernel accepts: strides,
    dilations and pooling windows below 1, a padding that is neither SAME (0) nor VALID
    (1); None when nothing is."""
    for key in _AT_LEAST_ONE:
        value = attrs.get(key)
        if isinstance(value, int) and value < 1:
            return f"option {key} is {value}, it must be at least 1"
    padding = attrs.get("padding")
    if isinstance(padding, int) and padding not in (0, 1):
        return f"option padding is {padding}, neither SAME (0) nor VALID (1)"
    return None
