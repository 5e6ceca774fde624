"""The real-browser harness' page server (issue 27.9) answers the browser and nobody else, and
never with a traceback: raw requests (http.client / a socket) for `/%00`, `/..%2f..`, a
foreign Host header, a folder, a symbolic link inside the folder, plus the harness' answer
parser, which splits lines at '\\n' only (an output name may hold U+2028 or U+0085). No
browser needed."""

from __future__ import annotations

import http.client
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from converter.validate.browser_setup import BrowserUnavailable, parse_answer
from converter.validate.page_server import HARNESS, PageServer


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "g0").mkdir(parents=True)
    (root / "g0" / "model.js").write_text("export const X = 1;\n")
    (root / "g0" / "model.html").write_text("<!doctype html><p>page</p>\n")
    (root / "g0" / "model.weights").write_bytes(b"\x00\x01\x02")
    (tmp_path / "secret.txt").write_text("not yours\n")
    os.symlink(root / "g0" / "model.js", root / "g0" / "inside.js")  # stays in the folder
    os.symlink(tmp_path / "secret.txt", root / "outside.txt")
    os.symlink(root / "g0", root / "linked")  # a linked folder
    return root


@pytest.fixture
def server(site: Path) -> Iterator[PageServer]:
    with PageServer(site, {"inputs0.json": b'{"x": 1}'}) as s:
        yield s


def _get(server: PageServer, path: str, host: str | None = "") -> tuple[int, bytes, str]:
    """(status, body, content type) of a GET sent as is; host '' = the server's own, None
    = no Host header."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host or f"127.0.0.1:{server.port}")
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.read(), answer.getheader("Content-Type") or ""
    finally:
        conn.close()


def test_serves_the_folder_and_the_harness_files(server: PageServer) -> None:
    status, body, kind = _get(server, "/g0/model.js")
    assert (status, body) == (200, b"export const X = 1;\n")
    assert kind.startswith("text/javascript")  # a module script needs a JavaScript type
    assert _get(server, "/g0/model.html")[0] == 200
    assert _get(server, "/g0/model.weights?cache=no")[:2] == (200, b"\x00\x01\x02")
    assert _get(server, f"{HARNESS}inputs0.json")[:2] == (200, b'{"x": 1}')
    status, body, _ = _get(server, f"{HARNESS}module_page.html?limits=1")
    assert status == 200 and b"opSupportLimits" in body
    assert _get(server, "/g0/model.js", host=f"localhost:{server.port}")[0] == 200


def test_listens_on_the_loopback_address_only(server: PageServer) -> None:
    assert server.url("/x") == f"http://127.0.0.1:{server.port}/x"
    assert server._server.server_address[0] == "127.0.0.1"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1",
                                  "localhost:1", "127.0.0.2:{port}", None])
def test_a_foreign_host_header_is_refused(server: PageServer, host: str | None) -> None:
    given = host.format(port=server.port) if host is not None else None
    status, body, _ = _get(server, "/g0/model.js", host=given)
    assert status == 403 and b"export" not in body


@pytest.mark.parametrize("path", ["/%00", "/g0/model.js%00", "/..%2f..", "/..%2F..%2Fetc%2Fpasswd",
                                  "/../secret.txt", "/g0/../../secret.txt", "/g0/%2e%2e/x",
                                  "/g0//model.js", "/g0%5cmodel.js", "/%ff", "/g0/./model.js",
                                  "/g0/%0amodel.js"])
def test_a_bad_path_is_400_and_silent(server: PageServer, path: str,
                                      capfd: pytest.CaptureFixture[str]) -> None:
    status, body, _ = _get(server, path)
    assert status == 400
    assert b"not yours" not in body
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


@pytest.mark.parametrize("path", ["/", "/g0", "/g0/", "/linked/", "/linked/model.js",
                                  "/g0/inside.js", "/outside.txt", "/missing.js",
                                  f"{HARNESS}run_page.mjs", f"{HARNESS}", "/g0/model.js/x"])
def test_folders_links_and_missing_files_are_404(server: PageServer, path: str,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    status, body, _ = _get(server, path)
    assert status == 404
    assert b"model.js" not in body and b"not yours" not in body and b"export" not in body
    assert capfd.readouterr() == ("", "")


def test_garbage_and_hang_ups_leave_no_trace(server: PageServer,
                                             capfd: pytest.CaptureFixture[str]) -> None:
    host = f"Host: 127.0.0.1:{server.port}\r\n".encode()
    for raw in (b"\x00\xff\r\n\r\n", b"GET /%00 HTTP/1.1\r\n" + host,
                b"BREW /g0/model.js HTTP/1.1\r\n" + host + b"\r\n",
                b"GET " + b"/a" * 40000 + b" HTTP/1.1\r\n\r\n",
                b"GET /g0/model.js HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n",
                b"GET /g0/model.js HTTP/1.1\r\n" + host + b"\r\n"):
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as s:
            try:  # the server may answer 400 and hang up before reading it all
                s.sendall(raw)
                s.shutdown(socket.SHUT_WR)
                while s.recv(65536):
                    pass
            except OSError:
                pass
    # the server still answers, and nothing was written to stdout or stderr
    assert _get(server, "/g0/model.js")[0] == 200
    assert capfd.readouterr() == ("", "")


def test_the_answer_splits_at_newline_only() -> None:
    name = "out\u2028put\u0085name\u2029"
    raw = json.dumps({"results": [{"outputs": {name: 1}}]}, ensure_ascii=False)
    assert len(raw.splitlines()) > 1  # what str.splitlines() made of it
    answer = parse_answer("run_page: a log line\n" + raw + "\n")
    assert list(answer["results"][0]["outputs"]) == [name]
    escaped = json.dumps({"results": [{"outputs": {name: 1}}]})  # run_page.mjs's ASCII
    assert list(parse_answer(escaped + "\n")["results"][0]["outputs"]) == [name]
    with pytest.raises(BrowserUnavailable, match="no JSON"):
        parse_answer("\n\n")
