"""The real-browser tests (`pytest -m browser`): a headless Chromium with WebNN on the CPU,
installed on first use into the cache folder (converter.validate.browser). Every test here
that needs the browser takes the `browser` fixture, which skips with the reason when Node.js,
npm or the browser cannot be installed or started, unless WEBNN_REQUIRE_BROWSER=1 (CI), where
that is an error."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture(scope="session")
def browser() -> Any:
    from converter.validate.browser import BrowserUnavailable, ensure_browser

    try:
        return ensure_browser()
    except BrowserUnavailable as exc:
        if os.environ.get("WEBNN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no browser (WEBNN_REQUIRE_BROWSER=1): {exc}")
        pytest.skip(f"no browser with WebNN: {exc}")
