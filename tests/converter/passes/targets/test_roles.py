"""converter.passes.targets.roles: operand roles named as the WebNN spec names a method's parameters
and options (the names `opSupportLimits()` uses, webnn-spec), output roles as the limits
entry lists them, and one limits entry's verdict on a data type and rank, against
hand-written entries."""

from __future__ import annotations

import numpy as np

from converter.core.webnn import ML, MLGraphBuilder
from converter.passes.targets.roles import (
    all_roles,
    allows,
    operand_places,
    operand_roles,
    output_role,
    replace_operands,
)

ENTRY = {"dataTypes": ["float32", "int32"], "rankRange": {"min": 1, "max": 4}}


def test_allows_reads_data_types_and_rank_range() -> None:
    assert allows(ENTRY, "float32", 2)
    assert not allows(ENTRY, "int64", 2)
    assert not allows(ENTRY, "float32", 0) and not allows(ENTRY, "float32", 5)
    assert allows(ENTRY, "float32")  # no rank given: only the data type
    assert allows({"dataTypes": ["int8"]}, "int8", 9)  # no rankRange: any rank
    assert allows({"rankRange": {"max": 2}}, "uint4", 0)  # no dataTypes: any type
    assert allows(None, "int64", 7)  # a role the limits do not list


def test_output_role_follows_the_entry() -> None:
    assert output_role({"output": ENTRY}, 0) == "output"
    assert output_role({"outputs": ENTRY}, 1) == "outputs"
    assert output_role({"output0": ENTRY, "output1": ENTRY}, 1) == "output1"
    assert output_role(None, 2) == "output2"


def test_roles_of_positional_and_list_operands() -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2, 3], "float32")
    idx = b.input("idx", [2, 3], "int32")
    y = b.gather_elements(x, idx)
    z = b.concat([x, y], 0)
    gather, concat = y.operator, z.operator
    assert gather is not None and concat is not None
    assert operand_roles(gather) == [("input", x), ("indices", idx)]
    assert operand_places(concat) == [("inputs", x, 0, 0), ("inputs", y, 0, 1)]
    limits = {"concat": {"inputs": ENTRY, "output": ENTRY}}
    assert all_roles(limits, concat) == [("inputs", x), ("inputs", y), ("output", z)]
    a, c = b.split(b.constant(np.zeros((4,), np.float32)), 2)
    split = a.operator
    assert split is not None
    assert [r for r, _ in all_roles({"split": {"outputs": ENTRY}}, split)][-2:] == \
        ["outputs", "outputs"]
    assert [r for r, _ in all_roles({}, split)][-2:] == ["output0", "output1"]
    assert c.operator is split


def test_replace_operands_at_their_places() -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2], "float32")
    w = b.input("w", [2], "float32")
    z = b.concat([x, w, x], 0)
    concat = z.operator
    assert concat is not None
    args, options = replace_operands(concat, lambda role, v: w if v is x else v)
    assert args[0] == [w, w, w] and args[1] == 0
    assert concat.args[0] == [x, w, x]  # the record is left as it was
    assert options == dict(concat.options)
