"""The `sourceDataTypes` table of exported graphs (`{"inputs": {id: type}, "outputs": {id:
type}}`, in the weights manifest and the safetensors metadata): wrong types at each level,
non-integer / unknown / too-narrow data types, identifiers that are not inputs / outputs (or
are outputs in the inputs section), control characters, huge tables."""

from __future__ import annotations

import json
import random
from typing import Any

from tools.fuzz.mutators.common import evil_string, evil_value

GUESSED_IDS = ["x", "y", "input_ids", "attention_mask", "indices", "probs", "scores", "image"]
SOURCE_TYPES = ["int64", "uint64", "int8", "uint8", "int32", "uint32", "float32", "float16",
                "int4", "bool", "", "INT64", "int64\n", None, 5, ["int64"]]


def mutate_source_types(table: Any, rng: random.Random) -> tuple[Any, str]:
    """A mutated copy of a `sourceDataTypes` value (or a new one when `table` is None)."""
    if not isinstance(table, dict):
        table = {"inputs": {rng.choice(GUESSED_IDS): "int64"}}
    table = json.loads(json.dumps(table))
    how = rng.choice(["whole", "section", "type", "type", "id", "id", "swap", "extra",
                      "huge", "empty"])
    sections = [s for s in ("inputs", "outputs") if isinstance(table.get(s), dict)]
    if how == "whole":
        return evil_value(rng), how
    if how == "section" or not sections:
        table[rng.choice(["inputs", "outputs"])] = rng.choice(
            [[], "int64", None, 1, {"a": {"b": "int64"}}, evil_value(rng)])
        return table, "section"
    section = rng.choice(sections)
    entries = table[section]
    ident = rng.choice(sorted(entries)) if entries else rng.choice(GUESSED_IDS)
    if how == "type":
        entries[ident] = rng.choice(SOURCE_TYPES)
    elif how == "id":
        entries[rng.choice(GUESSED_IDS + [evil_string(rng), ident.upper(), ident + "\n"])] = \
            entries.pop(ident, "int64")
    elif how == "swap":  # the sections swapped: inputs named as outputs and back
        table["inputs"], table["outputs"] = table.get("outputs", {}), table.get("inputs", {})
    elif how == "extra":
        table[rng.choice(["extra", "Inputs", evil_string(rng)])] = {ident: "int64"}
    elif how == "huge":
        entries.update({f"id{i}": "int64" for i in range(50000)})
    else:
        table[section] = {}
    return table, how
