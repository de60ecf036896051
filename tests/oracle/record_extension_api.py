"""Record what JAX's extension API gives for tests/programs/extension_api.py into
tests/data/extension_api.json.

    /work/oracle/bin/python tests/oracle/record_extension_api.py
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import jax  # noqa: E402

from programs import extension_api  # noqa: E402

if __name__ == "__main__":
    record = {"jax_version": jax.__version__}
    for name, program in extension_api.PROGRAMS.items():
        record[name] = extension_api.to_plain(program(jax))
    with open(os.path.join(ROOT, "tests", "data", "extension_api.json"), "w") as f:
        json.dump(record, f, indent=1)
    print(json.dumps(record, indent=1)[:3000])
