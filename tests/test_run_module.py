"""`python -m pyjax.run script.py [args]` runs a JAX script on pyjax (pyjax/run.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import jax
    import jax.numpy as jnp
    import helper_module  # found beside the script, as `python script.py` finds it
    x = jnp.arange(4.0)
    print(jax.__name__, type(x).__module__.split(".")[0], float(jnp.sum(x)), sys.argv,
          __name__, helper_module.VALUE)
    print(jax.jit(lambda a: a * 2)(x).tolist())
    sys.exit(int(sys.argv[1]))
""")


def _run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    (tmp_path / "helper_module.py").write_text("VALUE = 'beside'\n")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", "pyjax.run", str(script), *args],
                          capture_output=True, text=True, cwd=os.path.dirname(tmp_path),
                          env=env, timeout=120)


def test_script_sees_pyjax_as_jax(tmp_path) -> None:
    proc = _run(tmp_path, "0", "--flag")
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert first == (f"pyjax pyjax 6.0 ['{tmp_path / 'script.py'}', '0', '--flag'] __main__ "
                     "beside")
    assert second == "[0.0, 2.0, 4.0, 6.0]"


def test_exit_status_is_propagated(tmp_path) -> None:
    assert _run(tmp_path, "7").returncode == 7


def test_uncaught_exception_fails(tmp_path) -> None:
    proc = _run(tmp_path, "not-a-number")
    assert proc.returncode == 1 and "ValueError" in proc.stderr


def test_usage_without_a_script() -> None:
    proc = subprocess.run([sys.executable, "-m", "pyjax.run"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "usage: python -m pyjax.run" in proc.stderr
