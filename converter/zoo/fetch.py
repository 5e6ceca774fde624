"""Models a manifest names by URL (`url = "..."` with `fetch = true`), read by whichever
process runs the entry (a zoo worker, a Dask task on another machine).

`fetched(url, suffix)` downloads `url` (http, https or file) once into the generated
models' cache (`converter.zoo.generated.cache_dir`), named `url-<16 hex digits of the URL's
sha256><suffix>`, through a temporary file renamed into place (concurrent workers never see a
partial file), and returns its path; later calls reuse the file. The entry's `sha256`, when
given, is checked after the download as for any model (a mismatch is the entry's
"model_changed" error).

Restrictions: no authentication, proxies are the standard library's; at most `MAX_BYTES`
are read (a larger file is an error, not truncated); a URL whose content changes upstream
is not downloaded again while its cached file exists (give `sha256` to notice).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

SCHEMES = ("http", "https", "file")
MAX_BYTES = 8 << 30
TIMEOUT_S = 120


def fetched(url: str, suffix: str = ".onnx") -> Path:
    """The local copy of `url` (see the module docstring); ValueError naming the URL and
    the reason when it cannot be read."""
    from converter.zoo.generated import cache_dir

    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise ValueError(f"url {url!r}: only {', '.join(SCHEMES)} URLs are fetched")
    folder = cache_dir()
    out = folder / f"url-{hashlib.sha256(url.encode()).hexdigest()[:16]}{suffix}"
    if out.is_file():
        return out
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=suffix, dir=folder)
    try:
        with os.fdopen(fd, "wb") as f, urllib.request.urlopen(url, timeout=TIMEOUT_S) as r:
            total = 0
            while chunk := r.read(1 << 20):
                total += len(chunk)
                if total > MAX_BYTES:
                    raise ValueError(f"url {url!r}: larger than {MAX_BYTES} bytes")
                f.write(chunk)
        if total == 0:
            raise ValueError(f"url {url!r}: empty")
        os.replace(tmp, out)
    except OSError as exc:
        raise ValueError(f"url {url!r} could not be fetched: {exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
