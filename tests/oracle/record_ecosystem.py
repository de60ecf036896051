"""Record real JAX's results for the programs in tests/ecosystem/programs/ (optax, flax, equinox,
chex, jaxtyping) into tests/data/ecosystem.json.

    /work/eco/bin/python tests/oracle/record_ecosystem.py

The interpreter needs jax==0.10.2 and the libraries pinned in requirements-ecosystem.txt (plus
beartype); each program runs in its own process through tests/ecosystem/run_program.py.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ECOSYSTEM = os.path.join(ROOT, "tests", "ecosystem")


def _installed_versions(names: list[str]) -> dict:
    from importlib.metadata import version
    return {name: version(name) for name in names}


def record() -> dict:
    names = sorted(f[:-3] for f in os.listdir(os.path.join(ECOSYSTEM, "programs"))
                   if f.endswith(".py"))
    results = {}
    for name in names:
        done = subprocess.run([sys.executable, os.path.join(ECOSYSTEM, "run_program.py"), name],
                              capture_output=True, text=True, check=True)
        results[name] = json.loads(done.stdout.splitlines()[-1])["result"]
        print(name, "ok")
    return {"versions": _installed_versions(["jax", "optax", "chex", "flax", "equinox",
                                             "jaxtyping", "beartype"]),
            "programs": results}


if __name__ == "__main__":
    with open(os.path.join(ROOT, "tests", "data", "ecosystem.json"), "w") as f:
        json.dump(record(), f, indent=1)
        f.write("\n")
