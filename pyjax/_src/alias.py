"""`pyjax.alias_as_jax()`: make `import jax`, `import jax.numpy`, `from jax import lax` load pyjax."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import Any


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real_name: str):
        self.real_name = real_name

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(self.real_name)

    def exec_module(self, module: Any) -> None:
        return None


#: JAX internal modules that are pyjax's own modules, not mappings (patching them must reach
#: pyjax: e.g. chex wraps `jax._src.compiler.backend_compile_and_load`)
_SAME_MODULE = {"jax._src.compiler": "pyjax._src.backend.compiler",
                "jax._src.checkify": "pyjax._src.checkify"}


def real_name(fullname: str) -> str:
    """The pyjax module standing for JAX module `fullname`: `jax.X` is `pyjax.X`, and JAX's
    internal modules `jax._src.X` are the mappings in pyjax/_src/compat/jax_src/."""
    if fullname in _SAME_MODULE:
        return _SAME_MODULE[fullname]
    if fullname == "jax._src" or fullname.startswith("jax._src."):
        return "pyjax._src.compat.jax_src" + fullname[len("jax._src"):]
    return "pyjax" + fullname[3:]


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Resolves `jax` and `jax.X.Y` to the pyjax modules `real_name` gives."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        real = real_name(fullname)
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


def alias_as_jax() -> None:
    """Install the alias (idempotent); anything imported as `jax` before is forgotten."""
    if any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        return
    for name in list(sys.modules):
        if name == "jax" or name.startswith("jax."):
            del sys.modules[name]
    sys.meta_path.insert(0, _AliasFinder())
