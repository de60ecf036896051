"""`jax.extend.linear_util`: functions wrapped together with transformations applied to them
when called (JAX's `WrappedFun`), and stores for values the transformations report back.

pyjax's own transformations are plain Python closures; this module exists for libraries that
build JAX-style transformation pipelines (`flatten_fun`, `trace_to_jaxpr_nounits`, ...).
"""
from __future__ import annotations

import functools
from typing import Any, Callable


class StoreException(Exception):
    """A store was read before it was filled, or filled twice."""


class Store:
    """One value reported by a transformation while the function ran (e.g. an output tree)."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self) -> None:
        self._val: Any = Store._EMPTY

    def store(self, val: Any) -> None:
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = Store._EMPTY

    @property
    def val(self) -> Any:
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not Store._EMPTY


def _thunk(store: Store) -> Callable[[], Any]:
    def get() -> Any:
        return store.val
    get.store = store
    return get


class WrappedFun:
    """`f` with transformations (innermost first) applied around it when `call_wrapped` runs.
    A transformation is `(kind, rule, static_args, store)`; see `transformation*` below."""

    __slots__ = ("f", "transforms", "params", "in_type", "debug_info")

    def __init__(self, f: Callable, transforms: tuple, params: tuple, in_type: Any,
                 debug_info: Any):
        self.f, self.transforms, self.params = f, transforms, params
        self.in_type, self.debug_info = in_type, debug_info

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, kind: str, rule: Callable, static_args: tuple, store: Store | None
             ) -> "WrappedFun":
        return WrappedFun(self.f, self.transforms + ((kind, rule, static_args, store),),
                          self.params, self.in_type, self.debug_info)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        call: Callable = functools.partial(self.f, **dict(self.params))
        for kind, rule, static_args, store in self.transforms:
            if store is not None:
                store.reset()
            call = _LAYERS[kind](call, rule, static_args, store)
        return call(*args, **kwargs)

    def populate_stores(self, other: "WrappedFun") -> None:
        for (_, _, _, mine), (_, _, _, theirs) in zip(self.transforms, other.transforms):
            if mine is not None and theirs:
                mine._val = theirs._val

    def __repr__(self) -> str:
        return f"Wrapped function:\n  {self.__name__} with {len(self.transforms)} transforms"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params)

    def __hash__(self) -> int:
        return hash((self.f, self.transforms, self.params))


def _generator_layer(call: Callable, gen: Callable, static_args: tuple, store: Any) -> Callable:
    """JAX's first form: a generator that yields the (args, kwargs) to call the inner
    function with, receives its result, then yields the final result (and, with aux, stores
    the value it yields second)."""
    def run(*args: Any, **kwargs: Any) -> Any:
        g = gen(*static_args, *args, **kwargs)
        inner_args, inner_kwargs = next(g)
        result = g.send(call(*inner_args, **inner_kwargs))
        g.close()
        if store is not None:
            result, aux = result
            store.store(aux)
        return result
    return run


def _function_layer(call: Callable, rule: Callable, static_args: tuple, store: Any) -> Callable:
    """JAX's second form: `rule(f, *static_args, *args)` (with a store first when it has aux)."""
    extra = (store,) if store is not None else ()
    return lambda *args, **kwargs: rule(call, *extra, *static_args, *args, **kwargs)


_LAYERS = {"generator": _generator_layer, "function": _function_layer}


def transformation(gen: Callable, fun: WrappedFun, *static_args: Any) -> WrappedFun:
    return fun.wrap("generator", gen, static_args, None)


def transformation_with_aux(gen: Callable, fun: WrappedFun, *static_args: Any,
                            use_eq_store: bool = False) -> tuple[WrappedFun, Callable]:
    store = Store()
    return fun.wrap("generator", gen, static_args, store), _thunk(store)


def transformation2(rule: Callable, fun: WrappedFun, *static_args: Any) -> WrappedFun:
    return fun.wrap("function", rule, static_args, None)


def transformation_with_aux2(rule: Callable, fun: WrappedFun, *static_args: Any,
                             use_eq_store: bool = False) -> tuple[WrappedFun, Callable]:
    store = Store()
    return fun.wrap("function", rule, static_args, store), _thunk(store)


def _curry(kind: Callable) -> Callable:
    """JAX's transformations are used as decorators and then called with (fun, *static)."""
    def decorate(rule: Callable) -> Callable:
        return functools.partial(kind, rule)
    return decorate


transformation = _curry(transformation)  # type: ignore[assignment]
transformation_with_aux = _curry(transformation_with_aux)  # type: ignore[assignment]
transformation2 = _curry(transformation2)  # type: ignore[assignment]
transformation_with_aux2 = _curry(transformation_with_aux2)  # type: ignore[assignment]


def wrap_init(f: Callable, params: dict | None = None, *, debug_info: Any = None
              ) -> WrappedFun:
    """`f` (called with `params` as keywords) as a WrappedFun with no transformations."""
    return WrappedFun(f, (), tuple(sorted((params or {}).items())), None, debug_info)


def merge_linear_aux(aux1: Callable, aux2: Callable) -> tuple[bool, Any]:
    """The value of whichever of two stores was filled, and whether it was the first."""
    s1, s2 = aux1.store, aux2.store  # type: ignore[attr-defined]
    if s1 and not s2:
        return True, s1.val
    if s2 and not s1:
        return False, s2.val
    raise StoreException("exactly one of the stores must be filled")


def cache(call: Callable, *, explain: Callable | None = None) -> Callable:
    """Memoise `call(fun: WrappedFun, *args)` on the wrapped function and arguments; stores
    filled on the first call are filled again on a hit."""
    memo: dict = {}

    def memoized(fun: WrappedFun, *args: Any) -> Any:
        key = (fun, args)
        hit = memo.get(key)
        if hit is not None:
            result, filled = hit
            fun.populate_stores(filled)
            return result
        result = call(fun, *args)
        memo[key] = (result, fun)
        return result
    memoized.cache_clear = memo.clear  # type: ignore[attr-defined]
    return memoized


__all__ = ["Callable", "StoreException", "WrappedFun", "cache", "merge_linear_aux",
           "transformation", "transformation2", "transformation_with_aux",
           "transformation_with_aux2", "wrap_init"]
