"""converter.api: every public name resolves, the machinery loads on first use, and
`import converter` forwards to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import converter
import converter.api

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_resolves() -> None:
    missing = [name for name in converter.api.__all__ if not hasattr(converter.api, name)]
    assert not missing
    assert set(converter.__all__) - {"__version__"} <= set(converter.api.__all__)
    assert converter.convert is converter.api.convert


def test_importing_the_api_loads_no_model_machinery() -> None:
    """What the command line needs to build its options (budgets, errors, files, the
    front-end registry) comes without onnx, the pipeline or validation; they load on first
    use of a name that needs them."""
    code = ("import sys, converter.api as api; "
            "heavy = ('onnx', 'converter.conversion.pipeline', 'converter.validate'); "
            "before = [m for m in heavy if m in sys.modules]; api.convert; "
            "print(before, 'converter.conversion.pipeline' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, cwd=ROOT)
    assert r.stdout.split() == ["[]", "True"]


def test_the_distribution_has_the_package_version() -> None:
    """pyproject.toml reads the version from converter.core.version (one place)."""
    from importlib.metadata import version

    import converter

    assert version("webnn-converter") == converter.__version__
