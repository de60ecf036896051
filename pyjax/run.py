"""`python -m pyjax.run script.py [args]`: run a script written for JAX on pyjax.

Installs `pyjax.alias_as_jax()` (so the script's `import jax` loads pyjax), then runs the
script as `__main__` with `sys.argv` set to the script and its arguments and the script's
folder first on `sys.path`, as `python script.py` would; the script's exit status is the
process's.
"""
from __future__ import annotations

import os
import runpy
import sys

import pyjax

USAGE = "usage: python -m pyjax.run script.py [args ...]"


def main(argv: list[str]) -> None:
    """Run argv[0] (a script path) as __main__ under the jax -> pyjax alias."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        raise SystemExit(0 if argv else 2)
    pyjax.alias_as_jax()
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python script.py` sets it
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
