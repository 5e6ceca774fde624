"""The fuzzer's mutators (tools/fuzz/mutators): the seed corpus has every kind, cases are
deterministic per seed and index, and each kind's mutators stay parseable where they must and
reach the values they are written for."""

from __future__ import annotations

import io
import json
import random
import struct

import numpy as np
import onnx
import pytest

from tools.fuzz import mutators, seeds
from tools.fuzz.case import CANARY_TOKEN, Case, case_rng
from tools.fuzz.mutators import (
    json_mut,
    limits_mut,
    onnx_amplify,
    onnx_external,
    onnx_mut,
    onnx_walk,
    text_mut,
    tflite_mut,
)
from tools.fuzz.mutators.base import Mutation


def test_corpus_has_every_kind(corpus: list[seeds.Seed]) -> None:
    kinds = {k for s in corpus for k in s.kinds}
    assert set(mutators.GRAPH_KINDS) <= kinds and "onnx" in kinds
    names = {s.name for s in corpus}
    assert {"tiny_cnn", "attention", "loop", "if", "external", "sparse"} <= names
    ext = next(s for s in corpus if s.name == "external")
    assert "external.data" in ext.files


def test_cases_are_deterministic_per_seed_and_index(corpus: list[seeds.Seed]) -> None:
    def make(i: int) -> Case:
        rng = case_rng(5, i)
        kind = rng.choice(mutators.KINDS)
        seed = rng.choice([s for s in corpus if kind in s.kinds])
        return mutators.make_case(i, seed, kind, rng)

    for i in range(40):
        a, b = make(i), make(i)
        assert a == b
        assert a.files[a.target] != next(
            s for s in corpus if s.name == a.seed).files[a.target] or a.links or a.fifos \
            or any(m.startswith("args.") for m in a.mutators) or not a.mutators[0]


def test_onnx_mutants_stay_parseable_and_change_the_model(corpus: list[seeds.Seed]) -> None:
    seed = next(s for s in corpus if s.name == "tiny_cnn")
    data = seed.files["tiny_cnn.onnx"]
    parsed = changed = 0
    for i in range(60):
        mut = Mutation(dict(seed.files), "tiny_cnn.onnx")
        out = onnx_mut.mutate(data, random.Random(i), mut)
        model = onnx.ModelProto()
        model.ParseFromString(out)
        parsed += 1
        changed += out != data
        assert mut.names and all(n.startswith("onnx.") for n in mut.names)
    assert parsed == 60 and changed >= 50


def test_onnx_external_data_points_at_the_canary(corpus: list[seeds.Seed]) -> None:
    seed = next(s for s in corpus if s.name == "tiny_cnn")
    seen = set()
    for i in range(80):
        mut = Mutation(dict(seed.files), "tiny_cnn.onnx")
        model = onnx_mut.parse(seed.files["tiny_cnn.onnx"])
        if onnx_external.external(model, random.Random(i), mut) is None:
            continue
        locs = [e.value for t in model.graph.initializer for e in t.external_data
                if e.key == "location"]
        seen.update(locs)
        if "link.bin" in locs:
            assert mut.links["link.bin"] in ("{canary}", "../canary.bin")
    assert {"../canary.bin", CANARY_TOKEN} <= seen


def test_attribute_mutators_reach_extremes(corpus: list[seeds.Seed]) -> None:
    seed = next(s for s in corpus if s.name == "tiny_cnn")
    values: set[int] = set()
    for i in range(100):
        model = onnx_mut.parse(seed.files["tiny_cnn.onnx"])
        onnx_mut.attr_int(model, random.Random(i), Mutation({}, "x"))
        for n in onnx_walk.nodes(model):
            for a in n.attribute:
                values.update([a.i, *a.ints])
    assert {0, -1, 2**63 - 1} & values


def test_amplification_mutators_reach_every_shape(corpus: list[seeds.Seed]) -> None:
    """ONNX: If chains and trees, doubling and recursive functions, big derived constants
    and sparse dense shapes; TFLite: big variable tensors, sparse dense shapes and dense
    levels. The mutants stay parseable and small (the point is a small file)."""
    seed = next(s for s in corpus if s.name == "tiny_cnn")
    seen: set[str] = set()
    for i in range(60):
        model = onnx_mut.parse(seed.files["tiny_cnn.onnx"])
        detail = onnx_amplify.amplify(model, random.Random(i), Mutation({}, "x"))
        assert detail is not None
        seen.add(detail.split(":")[0])
        assert len(onnx_mut.parse(model.SerializeToString()).graph.node) >= 1
        assert model.ByteSize() < 2 << 20
    assert {"if-chain", "if-tree", "doubling", "recursive", "sparse", "ConstantOfShape",
            "Expand", "Tile", "Range"} <= seen
    tfl = next(s for s in corpus if "tflite" in s.kinds)
    S = tflite_mut.schema()
    if S is None:
        return
    hows = set()
    for i in range(30):
        m = S.ModelT.InitFromPackedBuf(tfl.files[tfl.kinds["tflite"]], 0)
        detail = tflite_mut.amplify(m, random.Random(i), Mutation({}, "x"))
        assert detail is not None
        hows.add(detail.split(":")[0])
        assert len(tflite_mut._pack(S, m)) < 64 << 10
    assert hows == {"variable", "sparse-shape", "sparse-levels"}


def test_tflite_mutators(corpus: list[seeds.Seed]) -> None:
    tfl = [s for s in corpus if "tflite" in s.kinds]
    if not tfl:
        pytest.skip("no TFLite seeds")
    seed = tfl[0]
    data = seed.files[seed.kinds["tflite"]]
    assert len(tflite_mut.field_positions(data)) > 20
    outs = set()
    for i in range(30):
        mut = Mutation(dict(seed.files), seed.kinds["tflite"])
        outs.add(tflite_mut.mutate(data, random.Random(i), mut))
        assert mut.names
    assert len(outs) > 20


def test_text_and_json_mutators(corpus: list[seeds.Seed]) -> None:
    graph = next(s for s in corpus if s.name == "tiny_cnn.webnn.blob")
    text = graph.files["tiny_cnn.webnn"]
    manifest = graph.files["tiny_cnn.manifest.json"]
    for i in range(30):
        rng = random.Random(i)
        mut = Mutation({}, "x")
        assert text_mut.mutate(text, rng, mut) != text or mut.names
        out = json_mut.mutate_manifest(manifest, rng, mut)
        assert out != manifest
    st = next(s for s in corpus if s.name == "tiny_cnn.webnn.safetensors")
    blob = st.files["tiny_cnn.safetensors"]
    assert all(json_mut.mutate_safetensors(blob, random.Random(i), Mutation({}, "x")) != blob
               for i in range(20))


def test_limits_seeds_and_mutants(corpus: list[seeds.Seed]) -> None:
    """Each shipped target's limits.json and the small one beside model seeds; mutants are
    structural (type and range damage, unknown / removed ops) or file-level (a FIFO, links
    inside the folder, never to the canary: --target FILE is named by the caller)."""
    from converter.passes.targets import known_targets

    limits = [s for s in corpus if "limits" in s.kinds]
    assert {s.name.split(".")[0] for s in limits} == {f"limits-{n}" for n in
                                                       [*known_targets(), "small"]}
    seed = next(s for s in limits if s.name == "limits-small.tiny_cnn")
    assert seed.model == "tiny_cnn.onnx" and seed.model in seed.files
    json.loads(seed.files["limits.json"])
    names: list[str] = []
    for i in range(300):
        mut = Mutation(dict(seed.files), "limits.json")
        out = limits_mut.mutate_limits(seed.files["limits.json"], random.Random(i), mut)
        names += mut.names
        assert out != seed.files["limits.json"] or mut.links or mut.fifos or \
            mut.names == ["limits.file-empty"] or "limits.rank" in mut.names[0]
        assert "{canary}" not in mut.links.values()
    kinds = {n.split("(")[0] for n in names}
    assert {"limits.rank", "limits.dtypes", "limits.remove-op", "limits.restrict",
            "limits.restrict-io", "limits.file-fifo", "limits.bytes-non-utf8"} <= kinds
    case = mutators.make_case(0, seed, "limits", random.Random(3))
    assert case.argv[:2] in (["convert", "m/tiny_cnn.onnx"], ["validate", "m/tiny_cnn.onnx"])
    assert case.argv[case.argv.index("--target") + 1] == "m/limits.json"


def test_model_runs_get_targets_and_float16_some_of_the_time(corpus: list[seeds.Seed]
                                                             ) -> None:
    seed = next(s for s in corpus if s.name == "tiny_cnn")
    argvs = [mutators.make_case(i, seed, "onnx", random.Random(i)).argv for i in range(400)]
    targeted = [a for a in argvs if "--target" in a]
    half = [a for a in argvs if "--precision" in a]
    assert 0.1 < len(targeted) / len(argvs) < 0.3 and 0.05 < len(half) / len(argvs) < 0.2
    assert all(a[0] in ("convert", "validate") for a in targeted + half)
    assert {a[a.index("--target") + 1] for a in targeted} == set(mutators.TARGETS)
    assert all(a[a.index("--precision") + 1] == "float16" for a in half)


def test_source_types_tables_are_seeded_and_mutated(corpus: list[seeds.Seed]) -> None:
    seed = next(s for s in corpus if s.name == "one_hot.chromium-coreml.webnn.blob")
    table = json.loads(seed.files["one_hot.manifest.json"])["sourceDataTypes"]
    assert table == {"inputs": {"indices": "int64"}}
    with np.load(io.BytesIO(seed.aux["inputs.npz"])) as z:
        assert z["indices"].dtype == np.int64  # what callers hold, not the graph's int32
    changed = 0
    for i in range(40):
        mut = Mutation({}, "x")
        raw = json_mut.mutate_manifest(seed.files["one_hot.manifest.json"], random.Random(i),
                                       mut)
        if any("source-types" in n for n in mut.names):
            changed += json.loads(raw)["sourceDataTypes"] != table
    assert changed >= 8
    st = next(s for s in corpus if s.name == "one_hot.chromium-coreml.webnn.safetensors")
    blob = st.files["one_hot.safetensors"]
    metas = []
    for i in range(80):
        mut = Mutation({}, "x")
        out = json_mut.mutate_safetensors(blob, random.Random(i), mut)
        if any(n.startswith("safetensors.source-types") for n in mut.names):
            (n,) = struct.unpack_from("<Q", out, 0)
            metas.append(json.loads(out[8:8 + n])["__metadata__"]["webnn.sourceDataTypes"])
    assert len(metas) >= 3


def test_commands_match_the_kind(corpus: list[seeds.Seed]) -> None:
    for kind in mutators.KINDS:
        seed = next((s for s in corpus if kind in s.kinds), None)
        if seed is None:
            continue
        for i in range(10):
            case = mutators.make_case(i, seed, kind, random.Random(i))
            assert case.argv[0] in ("convert", "inspect", "validate", "run")
            assert case.argv[1].startswith("m/")
            if case.argv[0] == "convert":
                assert case.argv[2:4] == ["-o", "out"]
            if case.argv[0] == "run":
                assert case.argv[2:6] == ["--inputs", "inputs.npz", "-o", "out.npz"]
