"""converter.runtimes registers the built-in backends from above (the WebNN layer names no
runtime): importing `converter` registers them without importing any runtime or numpy, and a
runtime module is imported when its backend is first asked for (torch only for torch)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from converter.core.webnn import ML, MLNotSupportedError
from converter.runtimes import get_backend


def test_import_registers_every_backend_and_loads_none() -> None:
    code = (
        "import sys, converter\n"
        "from converter.core.webnn.backends import get_backend\n"
        "assert not {'numpy', 'torch', 'converter.runtimes.reference'} & set(sys.modules)\n"
        "assert get_backend('reference').name == 'reference'\n"
        "assert 'converter.runtimes.reference' in sys.modules\n"
        "assert not {'torch', 'converter.runtimes.torch', 'onnxruntime'} & set(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_backend_names_the_registered_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown backend 'nope' \(known: onnxruntime, "
                                         r"reference, torch\)"):
        get_backend("nope")
    with pytest.raises(MLNotSupportedError, match="unknown backend 'nope'"):
        ML().create_context(backend="nope")
