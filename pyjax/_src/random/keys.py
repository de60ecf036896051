"""PRNG implementations, the key dtype `key<impl>`, and `PRNGKeyArray`, a concrete key array.

A key array of shape S is held as a uint32 buffer of shape S + impl.key_shape (its key data);
the dtype `KeyTy(impl)` says how to read it.  Jaxprs see avals `key<fry>[S]`; impls see the
buffer.  Indexing and reshaping a concrete key array act on the leading (logical) axes only.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace_state import trace_state


class PRNGImpl(NamedTuple):
    """A PRNG: key shape and the functions on key data (uint32 buffers with leading key axes).

    seed(int[K]) -> u32[K, *key_shape]; split(u32[K, *ks], shape) -> u32[K, *shape, *ks];
    fold_in(u32[K, *ks], u32[M]) -> u32[broadcast(K, M), *ks];
    random_bits(u32[K, *ks], bit_width, shape) -> uint<bit_width>[K, *shape].
    """
    key_shape: tuple[int, ...]
    seed: Callable[[np.ndarray], np.ndarray]
    split: Callable[[np.ndarray, tuple], np.ndarray]
    random_bits: Callable[[np.ndarray, int, tuple], np.ndarray]
    fold_in: Callable[[np.ndarray, np.ndarray], np.ndarray]
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self) -> int:
        return hash(self.tag)

    def __str__(self) -> str:
        return self.tag


#: Registered implementations, by name.
prngs: dict[str, PRNGImpl] = {}


def register_prng(impl: PRNGImpl) -> None:
    """Make `impl` available by name (e.g. to `key(seed, impl="threefry2x32")`)."""
    if impl.name in prngs:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    prngs[impl.name] = impl


class KeyTy(dtypes.ExtendedDType):
    """The dtype of key arrays of one PRNG implementation; prints as `key<tag>`."""

    __slots__ = ("_impl",)
    type = dtypes.prng_key

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    @property
    def name(self) -> str:
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:
        return math.prod(self._impl.key_shape) * 4

    def wrap_physical(self, buf: np.ndarray) -> "PRNGKeyArray":
        """The concrete key array whose key data is `buf`."""
        return PRNGKeyArray(self._impl, np.asarray(buf, np.uint32))

    def __eq__(self, other: object) -> bool:
        return type(other) is KeyTy and self._impl == other._impl

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl))

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def check_key_data(impl: PRNGImpl, data: Any) -> None:
    """Raise JAX's TypeError unless `data` can be the key data of `impl`'s keys."""
    if not (hasattr(data, "ndim") and hasattr(data, "shape") and hasattr(data, "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have ndim, "
                        f"shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={data.ndim}")
    ndim = len(impl.key_shape)
    if tuple(data.shape[-ndim:]) != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                        f"with {impl.key_shape}; got shape={tuple(data.shape)} for impl={impl!r}")
    if data.dtype not in (dtypes.uint32, dtypes.float0):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")


def _logical(method: Callable[..., np.ndarray]) -> Callable[..., "PRNGKeyArray"]:
    """A key-array method that applies `method` to the array of key positions and gathers;
    under a trace it is Array's method (staged, as JAX stages a key array's methods)."""
    name = method.__name__

    def fn(self: "PRNGKeyArray", *args: Any, **kwargs: Any) -> "PRNGKeyArray":
        if trace_state.trace is not None:
            return getattr(Array, name)(self, *args, **kwargs)
        positions = np.arange(self.size).reshape(self.shape)
        picked = method(positions, *args, **kwargs)
        flat = self._buf.reshape(-1, *self._impl.key_shape)
        return PRNGKeyArray(self._impl, flat[np.asarray(picked)])
    fn.__name__ = method.__name__
    return fn


def _refused(name: str) -> Callable[..., Any]:
    """An operator method raising lax's TypeError for key dtypes."""
    def op(self: "PRNGKeyArray", *others: Any) -> Any:
        names = [self.dtype.name] + [o.dtype.name if isinstance(o, PRNGKeyArray) else
                                     dtypes.dtype_name(dtypes.dtype_and_weak(o)[0])
                                     for o in others]
        raise TypeError(f"{name} does not accept dtypes {', '.join(names)}.")
    op.__name__ = name
    return op


class PRNGKeyArray(Array):
    """A concrete array of PRNG keys: dtype `key<tag>`, shape without the key-data axes."""

    __slots__ = ("_impl", "_buf", "__weakref__")

    def __init__(self, impl: PRNGImpl, key_data: np.ndarray):
        check_key_data(impl, key_data)
        self._impl = impl
        self._buf = key_data

    # -- metadata ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._buf.shape[:self._buf.ndim - len(self._impl.key_shape)]

    @property
    def dtype(self) -> KeyTy:
        return KeyTy(self._impl)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.itemsize * self.size

    @property
    def weak_type(self) -> bool:
        return False

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, KeyTy(self._impl))

    # -- conversions JAX refuses -------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
                        "jax.random.key_data(arr) if you wish to extract the underlying integer "
                        "array.")

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    __hash__ = None  # type: ignore[assignment]

    # -- arithmetic: refused, as lax refuses key dtypes --------------------------------------
    __add__ = __radd__ = _refused("add")
    __sub__ = __rsub__ = _refused("sub")
    __mul__ = __rmul__ = _refused("mul")
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _refused("div")
    __mod__ = __rmod__ = _refused("rem")
    __pow__ = __rpow__ = _refused("pow")
    __neg__ = _refused("neg")
    __lt__, __le__, __gt__, __ge__ = _refused("lt"), _refused("le"), _refused("gt"), _refused("ge")

    # -- iteration and indexing over the key axes --------------------------------------------
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator["PRNGKeyArray"]:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (PRNGKeyArray(self._impl, row) for row in self._buf)

    def __getitem__(positions, index):
        return positions[_host_index(index)]

    def reshape(positions, *shape, order="C"):
        return positions.reshape(*shape, order=order)

    def ravel(positions, order="C"):
        return positions.ravel(order)

    def flatten(positions, order="C"):
        return positions.ravel(order)

    def squeeze(positions, axis=None):
        return positions.squeeze(axis)

    def transpose(positions, *axes):
        return positions.transpose(*axes)

    def swapaxes(positions, a, b):
        return positions.swapaxes(a, b)

    def take(positions, indices, axis=None):
        return positions.take(np.asarray(indices), axis)

    __getitem__, reshape, ravel, flatten, squeeze, transpose, swapaxes, take = map(
        _logical, (__getitem__, reshape, ravel, flatten, squeeze, transpose, swapaxes, take))

    @property
    def T(self) -> "PRNGKeyArray":  # noqa: N802 - NumPy's name
        return Array.T.__get__(self) if trace_state.trace is not None else self.transpose()

    # -- comparisons (of the key data) -------------------------------------------------------
    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        axes = tuple(range(-len(self._impl.key_shape), 0))
        return ArrayImpl(np.asarray(np.all(self._buf == other._buf, axis=axes)))

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ArrayImpl(~np.asarray(eq._buf))

    # -- host and device ---------------------------------------------------------------------
    def copy(self) -> "PRNGKeyArray":
        return PRNGKeyArray(self._impl, self._buf.copy())

    __copy__ = copy

    def __deepcopy__(self, memo: Any) -> "PRNGKeyArray":
        return self.copy()

    def __reduce__(self) -> Any:
        return (PRNGKeyArray, (self._impl, np.array(self._buf)))

    def block_until_ready(self) -> "PRNGKeyArray":
        return self

    def devices(self) -> set:
        from pyjax._src.parallel.devices import default_device
        return {default_device()}

    @property
    def device(self) -> Any:
        from pyjax._src.parallel.devices import default_device
        return default_device()

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._buf}"

    __str__ = __repr__


def _host_index(index: Any) -> Any:
    """An index with any concrete arrays in it turned into NumPy arrays."""
    if isinstance(index, tuple):
        return tuple(_host_index(i) for i in index)
    return np.asarray(index) if isinstance(index, Array) else index
