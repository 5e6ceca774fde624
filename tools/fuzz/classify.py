"""What a run's outcome means.

Classes, in the order they are decided (the first that applies wins):

| class      | meaning |
|------------|---------|
| escape     | the canary outside the model folder was read (its access time moved, or its bytes are in an output / on stdout), or a file was written outside the run's output paths |
| hang       | still running at the wall-time limit (killed; faulthandler's dump says where) |
| memory     | MemoryError / bad_alloc / "Cannot allocate memory" under the RLIMIT_AS limit, or killed by SIGKILL (the OOM killer) |
| crash      | killed by another signal (SIGSEGV, SIGABRT, ...) or an exit code other than 0, 1, 2 |
| contained  | the reference framework (LiteRT, onnxruntime) crashed natively in its forked child (`converter.core.isolate`: "... crashed running ..."): the user saw one clean line, but the importer let through a model the framework cannot take, so it is a finding |
| internal   | stderr says "internal error" (or a node failed with reason `[internal_error]`: a handler raised an unexpected exception) or shows a Python traceback |
| leftover   | a failed `convert` left its output folder or a temporary `.export-*` folder, or `run` a temporary file |
| js         | the generated JavaScript fails `node --check` (when node is installed), or the HTML page has a name that closes its <script> block |
| roundtrip  | `convert` succeeded but `converter.api.load` cannot read the `.webnn` / `.webnn.json` graph it wrote (checked in another child) |
| multi-line | exit 1/2 but stderr is not exactly one `error: ...` line (extra lines, a click usage block, control characters, U+2028/U+2029/U+0085 inside the message) |
| clean      | exit 1/2 with exactly one plain `error: ...` line and nothing left behind |
| ok         | exit 0 |

`site` is the deepest frame of project code (converter/, op_mappings/, cli/) of the
traceback or faulthandler dump, as `path:line (function)`.
"""

from __future__ import annotations

import re
import signal
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ("ok", "clean", "escape", "hang", "memory", "crash", "contained", "internal",
           "leftover", "js", "roundtrip", "multi-line")
NOT_CLEAN = CLASSES[2:]
MEMORY_WORDS = ("MemoryError", "bad_alloc", "Cannot allocate memory", "Unable to allocate",
                "ailed to allocate")
PROJECT_DIRS = ("converter/", "op_mappings/", "cli/")
CAUSE_MARKER = "webnn-fuzz: the exception behind an [internal_error] node:"
CAUSE_END = "webnn-fuzz: end of that exception"
LINE_BREAKS = {"\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"}
CONTAINED = re.compile(r"^error: .* crashed running ", re.MULTILINE)
_TB_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_FH_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


@dataclass
class Evidence:
    """What the runner saw besides the exit status and the output streams."""

    canary_read: str = ""            # why we think the canary was read ("" if not)
    outside_writes: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    js_errors: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    cls: str
    detail: str = ""
    site: str = ""

    def signature(self, kind: str) -> str:
        """What makes two findings the same: class, kind, and the site (internal errors,
        crashes with a dump) or the message with numbers and quoted text blanked."""
        return f"{self.cls}|{kind}|{self.site or normalize(self.detail)}"


def normalize(text: str) -> str:
    text = re.sub(r"/\S*/wf-[\w.-]+(/[\w.-]+)?", "<run>", text)  # the run folder (temporary)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\d+", "N", text)
    return text[:100]


def _rel(path: str) -> str | None:
    p = Path(path)
    try:
        rel = p.resolve().relative_to(ROOT).as_posix() if p.is_absolute() else p.as_posix()
    except ValueError:
        return None
    return rel if rel.startswith(PROJECT_DIRS) else None


def site_of(stderr: str) -> str:
    """The deepest project frame of the last traceback (or of the first thread of a
    faulthandler dump, which lists the most recent call first)."""
    lines = stderr.splitlines()
    marked = next((i for i, line in enumerate(lines) if line == CAUSE_MARKER), None)
    if marked is not None:  # the handler exception behind an [internal_error] (--debug rerun)
        end = next((i for i in range(marked + 1, len(lines)) if lines[i] == CAUSE_END),
                   len(lines))
        site = site_of("\n".join(lines[marked + 1:end]))
        if site:
            return site
    start = max((i for i, line in enumerate(lines)
                 if line.startswith("Traceback (most recent call last)")), default=None)
    if start is not None:
        best = ""
        for line in lines[start:]:
            m = _TB_FRAME.match(line)
            if m and (rel := _rel(m["path"])):
                best = f"{rel}:{m['line']} ({m['func']})"
        if best:
            return best
    for line in lines:  # faulthandler: most recent call first
        m = _FH_FRAME.match(line)
        if m and (rel := _rel(m["path"])):
            return f"{rel}:{m['line']} ({m['func']})"
    return ""


def control_char(text: str) -> str | None:
    """The first character that breaks a one-line message (other than a tab)."""
    for ch in text:
        if ch in LINE_BREAKS or (unicodedata.category(ch) == "Cc" and ch != "\t"):
            return f"U+{ord(ch):04X}"
    return None


def classify_load(exit_code: int | None, sig: int | None, timed_out: bool, stderr: str
                  ) -> Verdict | None:
    """The verdict of the round-trip check of an exported graph (None: it loaded)."""
    if exit_code == 0:
        return None
    why = "timed out" if timed_out else f"signal {sig}" if sig is not None else \
        _last_error(stderr) or f"exit code {exit_code}"
    return Verdict("roundtrip", why[:300], site_of(stderr))


def _last_error(stderr: str) -> str:
    errs = [line for line in stderr.splitlines() if line.startswith("error: ")]
    return errs[-1] if errs else ""


def classify(command: str, exit_code: int | None, sig: int | None, timed_out: bool,
             stdout: str, stderr: str, evidence: Evidence | None = None) -> Verdict:
    ev = evidence or Evidence()
    if ev.canary_read:
        return Verdict("escape", ev.canary_read)
    if ev.outside_writes:
        return Verdict("escape", "wrote outside the output paths: "
                       + ", ".join(ev.outside_writes[:3]))
    if timed_out:
        return Verdict("hang", "no result within the time limit", site_of(stderr))
    memory = next((w for w in MEMORY_WORDS if w in stderr), None)
    if memory and (sig is not None or exit_code not in (0,)):
        return Verdict("memory", _last_error(stderr) or memory, site_of(stderr))
    if sig is not None:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGKILL:
            return Verdict("memory", "killed by SIGKILL (out of memory?)", site_of(stderr))
        fatal = next((line for line in stderr.splitlines()
                      if line.startswith("Fatal Python error")), "")
        return Verdict("crash", f"killed by {name} {fatal}".strip(), site_of(stderr))
    if exit_code == 2 and CONTAINED.search(stderr):
        return Verdict("contained", _last_error(stderr)[:300])
    if "Traceback (most recent call last)" in stderr or "internal error" in stderr \
            or "[internal_error]" in stderr:
        last = _last_error(stderr) or next(
            (line for line in reversed(stderr.splitlines()) if line.strip()), "")
        return Verdict("internal", last[:300], site_of(stderr))
    if exit_code not in (0, 1, 2):
        return Verdict("crash", f"exit code {exit_code}", site_of(stderr))
    if ev.leftovers:
        return Verdict("leftover", "left behind: " + ", ".join(ev.leftovers[:3]))
    if exit_code == 0:
        if ev.js_errors:
            return Verdict("js", ev.js_errors[0][:300])
        return Verdict("ok")
    lines = stderr.rstrip("\n").split("\n") if stderr.strip() else []
    errors = [line for line in lines if line.startswith("error: ")]
    if not errors:
        first = next((line for line in lines if line.strip()), "(nothing on stderr)")
        return Verdict("multi-line", f"no 'error:' line; stderr starts {first[:120]!r}")
    if len(lines) != 1:
        other = next(line for i, line in enumerate(lines) if i != lines.index(errors[0]))
        return Verdict("multi-line", f"{len(lines)} lines on stderr; {errors[0][:100]!r} "
                       f"and {other[:100]!r}")
    bad = control_char(errors[0])
    if bad:
        return Verdict("multi-line", f"{bad} in {errors[0][:160]!r}")
    return Verdict("clean", errors[0][7:300])
