"""Record JAX's losses for tests/programs/mlp_classifier.py into tests/data/mlp_classifier.json.

    /work/oracle/bin/python tests/oracle/record_mlp_classifier.py
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import jax  # noqa: E402

from programs import mlp_classifier  # noqa: E402

if __name__ == "__main__":
    record = {"jax_version": jax.__version__, **mlp_classifier.train(jax)}
    with open(os.path.join(ROOT, "tests", "data", "mlp_classifier.json"), "w") as f:
        json.dump(record, f, indent=1)
    print(record)
