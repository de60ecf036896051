"""Run one program of tests/ecosystem/programs/ in this interpreter and print, as JSON on the last
line of stdout, its `run()` dict ("result"), the module `jax` named ("jax_module") and any
jaxlib modules that got imported ("jaxlib_modules": under the alias there must be none).

    python tests/ecosystem/run_program.py [--alias [--checks]] NAME

With --alias, `pyjax.alias_as_jax()` is installed before the program (and so its libraries)
imports `jax`; without it the program gets whatever `jax` the interpreter has (real JAX when
recording); --checks also turns on jax_enable_checks, as tests/conftest.py does for the rest of
the suite, so every jaxpr the libraries stage is type-checked.  One program per process: the
alias and the libraries' global state stay there.
"""
import argparse
import importlib
import json
import os
import sys

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--alias", action="store_true", help="run on pyjax as `jax`")
    parser.add_argument("--checks", action="store_true", help="with --alias: jax_enable_checks")
    args = parser.parse_args()
    if args.alias:
        import pyjax
        pyjax.alias_as_jax()
        pyjax.config.update("jax_enable_checks", args.checks)
    sys.path.insert(0, PROGRAMS)
    result = importlib.import_module(args.name).run()
    jaxlib = sorted(m for m in sys.modules if m == "jaxlib" or m.startswith("jaxlib."))
    print(json.dumps({"result": result, "jax_module": sys.modules["jax"].__name__,
                      "jaxlib_modules": jaxlib}))


if __name__ == "__main__":
    main()
