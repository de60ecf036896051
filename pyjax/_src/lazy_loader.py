"""Names loaded on first attribute access (PEP 562), so `import pyjax` stays fast: submodules
(`pyjax.scipy`...) and re-exported attributes (`jax.random`, `lax.conv`...) whose defining
modules most programs never need at import time."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable


def attach(package: str, submodules: Iterable[str] = (),
           attributes: dict[str, str] | None = None,
           fallback: Callable[[str], Any] | None = None, fallback_names: Iterable[str] = ()
           ) -> tuple[Callable, Callable, list[str]]:
    """Return `__getattr__`, `__dir__` and `__all__` for `package`.

    `submodules`: names of `package`'s submodules, imported on first access.
    `attributes`: name -> "module:attr" (or "module" for the module itself), imported on first
    access and then stored in the package's namespace, so the lookup runs once per name.
    `fallback(name)`: consulted for any other name (raising AttributeError if it has none);
    `fallback_names` are the names it resolves.
    `__dir__` lists the package's loaded names and the lazy ones; `__all__` lists the lazy ones.
    """
    subs = list(submodules)
    attrs = dict(attributes or {})
    lazy_names = [*subs, *attrs, *fallback_names]

    def __getattr__(name: str) -> Any:
        module = importlib.import_module(package)
        if name in attrs:
            where, _, attr = attrs[name].partition(":")
            value = importlib.import_module(where)
            if attr:
                value = getattr(value, attr)
            setattr(module, name, value)
            return value
        if name in subs:
            return importlib.import_module(f"{package}.{name}")
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        loaded = vars(importlib.import_module(package))
        return sorted({*loaded, *lazy_names})

    return __getattr__, __dir__, lazy_names


def public_names(namespace: dict[str, Any], lazy: Iterable[str]) -> list[str]:
    """`__all__` for a re-exporting package: what `from package import *` took before its
    names became lazy (the public names in its namespace) plus the lazy names."""
    return sorted({*(n for n in namespace if not n.startswith("_")), *lazy})


def load_deferred() -> None:
    """Import everything `import pyjax` leaves to first use for speed (issue 16), i.e. load what
    it loaded before: for code that looks primitives up by name or enumerates the registry (the
    op-table census, checkify's rule table, JAX's rule dictionaries in the compat layer).
    Packages that were always lazy (`pyjax.scipy`, `pyjax.nn`, ...) stay unloaded.
    `_DEFERRED` in each public package names what to load: attributes, submodules, or (in
    `pyjax.lax`) the defining modules themselves."""
    global _all_loaded
    if _all_loaded:
        return
    _all_loaded = True
    import pyjax
    import pyjax.lax
    import pyjax.numpy
    try:
        for package in (pyjax, pyjax.lax, pyjax.numpy):
            for name in package._DEFERRED:
                if name.startswith("pyjax."):
                    importlib.import_module(name)
                else:
                    getattr(package, name)
    except BaseException:
        _all_loaded = False
        raise


_all_loaded = False
