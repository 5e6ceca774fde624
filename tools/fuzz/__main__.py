"""`python -m tools.fuzz`: see tools/fuzz/cli.py."""

import os

# One thread per child (set before numpy / onnxruntime are imported): the campaign runs
# `--jobs` children side by side.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from tools.fuzz.cli import main  # noqa: E402

raise SystemExit(main())
