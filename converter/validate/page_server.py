"""The local web server the real-browser harness loads its pages from (`PageServer`).

It serves one folder (the exported graph: `<stem>.js`, `.html`, `.weights`) plus, under
`HARNESS`, the harness page `harness/module_page.html` (package data, `HARNESS_FILES`) and
in-memory files (the inputs), to the headless browser only. It is deliberately narrow:

- it listens on 127.0.0.1 only (a free port) and answers only requests whose `Host` header is
  `127.0.0.1:PORT` or `localhost:PORT` (anything else, or none: 403), which closes the DNS
  rebinding window of a page on another site;
- GET and HEAD of regular files only: a folder, a missing file, a path with a `..`, `.` or
  empty segment, a NUL, a backslash or another control character, and anything that is or
  passes through a symbolic link, even one that stays inside the folder, answer 404 (400 for
  a malformed path); no directory listings;
- it never writes to stderr: no request log, no traceback (a client that hangs up, an
  undecodable or absurd request) — errors are answered with a status code and forgotten.
"""

from __future__ import annotations

import http.server
import importlib.resources
import mimetypes
import os
import stat
import threading
import urllib.parse
from collections.abc import Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

HARNESS_FILES: Traversable = importlib.resources.files("converter.validate") / "harness"
"""The harness sources, package data: run_page.mjs, module_page.html, package.json + lock."""
HARNESS = "/__webnn_harness__/"
"""URL prefix under which the server serves the harness pages and the inputs."""
HARNESS_PAGES = ("module_page.html",)
REQUEST_TIMEOUT_S = 60.0
"""A connection idle this long is closed (a stalled client never holds a thread for long)."""
_TYPES = {".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
          ".html": "text/html; charset=utf-8", ".json": "application/json",
          ".weights": "application/octet-stream", ".webnn": "text/plain; charset=utf-8"}


class BadPath(ValueError):
    """A request path that cannot name a file of the folder (answered 400)."""


def path_segments(raw: str) -> list[str]:
    """The decoded segments of a request target's path (the last is '' for a path ending
    in '/', a folder); raises BadPath for one that is not absolute, does not decode as UTF-8,
    or holds a NUL, a backslash, another control character, or a '.', '..' or empty segment
    before the last."""
    path = urllib.parse.urlsplit(raw).path
    if not path.startswith("/"):
        raise BadPath(raw)
    try:
        decoded = urllib.parse.unquote(path, errors="strict")
    except UnicodeDecodeError:
        raise BadPath(raw) from None
    if any(ord(c) < 0x20 or c in "\\\x7f" for c in decoded):
        raise BadPath(raw)
    segments = decoded[1:].split("/")
    if any(s in (".", "..") for s in segments) or "" in segments[:-1]:
        raise BadPath(raw)
    return segments


def open_inside(root: Path, segments: list[str]) -> tuple[int, int]:
    """(file descriptor, size) of the regular file `root/segments...`, walked one segment at
    a time without following any symbolic link; raises FileNotFoundError for anything else
    (missing, a folder, a link, a device)."""
    if not segments[-1]:
        raise FileNotFoundError("a folder")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    folder_flags = flags | getattr(os, "O_DIRECTORY", 0)
    fd = os.open(root, folder_flags)
    try:
        for i, name in enumerate(segments):
            last = i == len(segments) - 1
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except (OSError, ValueError):
                raise FileNotFoundError(name) from None
            if last and not stat.S_ISREG(info.st_mode) or \
                    not last and not stat.S_ISDIR(info.st_mode):
                raise FileNotFoundError(name)
            try:
                child = os.open(name, flags if last else folder_flags, dir_fd=fd)
            except (OSError, ValueError):
                raise FileNotFoundError(name) from None
            os.close(fd)
            fd = child
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileNotFoundError("/".join(segments))
        return fd, info.st_size
    except BaseException:
        os.close(fd)
        raise


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Silent: a client that hangs up or sends garbage is no news (never a traceback)."""


class PageServer:
    """Serves `folder` on 127.0.0.1 (a free port) in a background thread, plus the harness
    pages (HARNESS_FILES) and the in-memory `extra` files under HARNESS; see the module
    docstring for what it refuses. Use it as a context manager."""

    def __init__(self, folder: str | os.PathLike[str],
                 extra: Mapping[str, bytes] | None = None) -> None:
        files = dict(extra or {})
        root = Path(folder).resolve()
        allowed: set[str] = set()

        class Handler(http.server.BaseHTTPRequestHandler):
            server_version = "webnn-converter"
            sys_version = ""
            timeout = REQUEST_TIMEOUT_S

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._answer(body=True)

            def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
                self._answer(body=False)

            def _answer(self, body: bool) -> None:
                if self.headers.get("Host", "").lower() not in allowed:
                    self.send_error(403)
                    return
                try:
                    segments = path_segments(self.path)
                except BadPath:
                    self.send_error(400)
                    return
                if len(segments) == 2 and f"/{segments[0]}/" == HARNESS:
                    name = segments[1]
                    if name in files:
                        self._send(files[name], "application/json", body)
                    elif name in HARNESS_PAGES:
                        self._send((HARNESS_FILES / name).read_bytes(), _TYPES[".html"],
                                   body)
                    else:
                        self.send_error(404)
                    return
                try:
                    fd, size = open_inside(root, segments)
                except FileNotFoundError:
                    self.send_error(404)
                    return
                with os.fdopen(fd, "rb") as f:
                    data = f.read(size) if body else b""
                self._send(data, self._kind(segments[-1]), body, size)

            @staticmethod
            def _kind(name: str) -> str:
                suffix = os.path.splitext(name)[1].lower()
                return _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or \
                    "application/octet-stream"

            def _send(self, data: bytes, kind: str, body: bool, size: int | None = None
                      ) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data) if size is None else size))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        allowed.update({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.1}, daemon=True)

    def url(self, path: str) -> str:
        """The address of `path` (absolute, e.g. '/g0/model.html') on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


__all__ = ["HARNESS", "HARNESS_FILES", "BadPath", "PageServer", "open_inside", "path_segments"]
