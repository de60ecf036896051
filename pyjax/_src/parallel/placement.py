"""Placing arrays by sharding: `device_put` to a device or sharding, `make_array_from_callback`,
`make_array_from_single_device_arrays`, and the `out_sharding=` keyword of creation
functions and samplers.  The host devices share one memory, so a placed array keeps one buffer
and records its sharding; its shards are views of that buffer.
"""
from __future__ import annotations

import enum
import functools
import inspect
import sys
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel.devices import process_count
from pyjax._src.parallel import mesh as mesh_lib
from pyjax._src.parallel import propagation
from pyjax._src.parallel.mesh import AxisType, Mesh
from pyjax._src.parallel.sharding import (
    NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, flatten_spec, placed)


def _is_device(x: Any) -> bool:
    from pyjax._src.parallel.devices import Device
    return isinstance(x, Device)


def _user_source() -> str:
    """The innermost caller frame outside pyjax, as JAX summarizes a source location:
    `file:line:column (function)` (column 0-based; left out when 0)."""
    from pyjax._src.core.source_info import include_filename
    frame = sys._getframe(1)
    while frame is not None and not include_filename(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "unknown"
    code = frame.f_code
    positions = list(code.co_positions())
    line, _, col, _ = positions[frame.f_lasti // 2] if frame.f_lasti >= 0 else (
        frame.f_lineno, None, 0, None)
    where = f"{code.co_filename}:{line if line is not None else frame.f_lineno}"
    return f"{where}:{col} ({code.co_qualname})" if col else f"{where} ({code.co_qualname})"


# -- device_put -------------------------------------------------------------------------------

def _to_sharding(target: Any, api: str) -> Sharding | None:
    """A placement target (device, sharding, PartitionSpec under set_mesh) as a sharding."""
    if target is None or isinstance(target, Sharding):
        return target
    if _is_device(target):
        return SingleDeviceSharding(target)
    if isinstance(target, PartitionSpec):
        mesh = mesh_lib.get_concrete_mesh()
        if mesh.empty:
            raise ValueError(f"Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed "
                             f"to {api}")
        return NamedSharding(mesh, target)
    raise TypeError(f"Invalid device or sharding passed to {api}: {target} of type "
                    f"{type(target)}")


def put_leaf(leaf: Any, target: Any) -> Any:
    """One leaf of device_put: an Array laid out by `target` (a device, sharding or
    PartitionSpec); tracers and untargeted arrays pass through as Arrays."""
    from pyjax._src.core.trace import Tracer
    from pyjax._src.numpy.lax_numpy import asarray
    out = leaf if isinstance(leaf, (ArrayImpl, Tracer)) else asarray(leaf)
    sharding = _to_sharding(target, "device_put")
    if sharding is None or not isinstance(out, ArrayImpl):
        return out
    if out.committed and out.sharding == sharding:  # already there: JAX hands it back
        return out
    if isinstance(sharding, NamedSharding):
        try:
            sharding.check_compatible_aval(out.shape)
        except ValueError as err:
            raise ValueError("One of device_put args is incompatible with its sharding "
                             f"annotation {sharding}: {err}") from None
    sharding.shard_shape(out.shape)  # IndivisibleError as in JAX
    return placed(out, sharding)


# -- device_put under a transformation: a device_put equation ---------------------------------

class ArrayCopySemantics(enum.Enum):
    """Whether a device_put may hand back its operand's buffer (JAX's enum of the name)."""

    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self) -> str:
        return f"ArrayCopySemantics.{self.name}"


def copy_semantics(donate: bool, may_alias: bool | None) -> ArrayCopySemantics:
    """JAX's reading of device_put's `donate` and `may_alias` flags."""
    if may_alias and donate:
        raise ValueError("may_alias and donate cannot be True at the same time.")
    if may_alias is None:
        may_alias = not donate
    if may_alias:
        return ArrayCopySemantics.REUSE_INPUT
    return ArrayCopySemantics.DONATE_INPUT if donate else ArrayCopySemantics.ALWAYS_COPY


def stage_device_put(leaves: list, targets: list, donate: bool, may_alias: bool | None
                     ) -> list:
    """device_put of traced (or, under a trace, any) leaves: one `device_put` equation whose
    results take each target's layout; on the host devices the values are the operands."""
    devices = tuple(_to_sharding(t, "device_put") if isinstance(t, PartitionSpec) else t
                    for t in targets)
    srcs = tuple(getattr(getattr(x, "aval", None), "explicit_sharding", None) for x in leaves)
    return device_put_p.bind(*leaves, devices=devices, srcs=srcs,
                             copy_semantics=(copy_semantics(donate, may_alias),) * len(leaves))


def _device_put_transpose(cts: list, *args: Any, devices: tuple, srcs: tuple,
                          copy_semantics: tuple) -> list:
    """Each cotangent goes back where its operand came from (a copy, as JAX transposes)."""
    from pyjax._src.transforms import ad
    picked = [i for i, (c, a) in enumerate(zip(cts, args))
              if ad.is_undefined(a) and type(c) is not ad.Zero]
    out: list = [ad.Zero(a.aval) if ad.is_undefined(a) else None for a in args]
    if any(copy_semantics[i] == ArrayCopySemantics.DONATE_INPUT for i in picked):
        raise ValueError("donate=True is not allowed during tranposition of device_put. "
                         "Please file an issue if you want this to be supported.")
    if picked:
        back = device_put_p.bind(*[cts[i] for i in picked],
                                 devices=tuple(srcs[i] for i in picked),
                                 srcs=tuple(devices[i] for i in picked),
                                 copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(picked))
        for i, y in zip(picked, back):
            out[i] = y
    return out


def _device_put_jvp(primals: Any, tangents: Any, **params: Any) -> tuple:
    from pyjax._src.transforms import ad
    out = device_put_p.bind(*primals, **params)
    return out, device_put_p.bind(*[ad.instantiate(t) for t in tangents], **params)


def _device_put_sharding_rule(eqn: Any, ins: list, sizes: dict) -> list:
    """A NamedSharding over Explicit axes lays its result out (its type says so); otherwise a
    device_put under jit keeps its operand's layout (XLA's CPU code ignores it)."""
    outs = []
    for spec, target, v in zip(ins, eqn.params["devices"], eqn.outvars):
        explicit = isinstance(target, NamedSharding) and target.mesh.explicit_axes
        outs.append(propagation.Given(target.spec, len(v.aval.shape)) if explicit else spec)
    return outs


def _device_put_result_mesh(params: dict) -> Any:
    return next((d.mesh for d in params["devices"] if isinstance(d, NamedSharding)), None)


device_put_p = Primitive("device_put", multiple_results=True)
device_put_p.impl = lambda *xs, **params: list(xs)
def _device_put_abstract_eval(*avals: Any, devices: tuple, **_: Any) -> list:
    """The operands' types, in the memory space each target's memory kind names (JAX's
    update_dp_aval)."""
    from pyjax._src.memory import of_kind
    return [a.update(memory_space=of_kind(d.memory_kind))
            if isinstance(a, ShapedArray) and isinstance(d, Sharding)
            and d.memory_kind is not None else a.update()
            for a, d in zip(avals, devices)]


device_put_p.abstract_eval = _device_put_abstract_eval
device_put_p.jvp = _device_put_jvp
device_put_p.transpose = _device_put_transpose
device_put_p.batch = lambda vals, dims, **params: (device_put_p.bind(*vals, **params), dims)
device_put_p.sharding_rule = _device_put_sharding_rule
device_put_p.result_mesh = _device_put_result_mesh


# -- building arrays from per-device pieces ---------------------------------------------------

def _check_pieces(values: list, shape: tuple, sharding: Sharding, dtype: np.dtype) -> None:
    expected = sharding.shard_shape(shape)
    for v in values:
        if np.shape(v) != expected:
            raise ValueError(
                f"Expected shard shape {expected} doesn't match the single device array shape "
                f"{np.shape(v)}. Shape of Array is {np.dtype(dtype).name}"
                f"[{','.join(map(str, shape))}] with sharding {sharding}")


def _assemble(shape: tuple, sharding: Sharding, pieces: dict, dtype: np.dtype) -> ArrayImpl:
    """One host buffer holding each device's piece at its index."""
    buf = np.empty(shape, dtype)
    for device, index in sharding.devices_indices_map(shape).items():
        buf[index] = pieces[device]
    return placed(ArrayImpl(buf, False), sharding)


def make_array_from_callback(shape: Sequence[int], sharding: Sharding,
                             data_callback: Callable[[Any], Any], dtype: Any = None
                             ) -> ArrayImpl:
    """An Array of `shape` laid out by `sharding`, each device's piece fetched as
    `data_callback(index)` (once for all devices when the sharding replicates)."""
    from pyjax._src.core import dtypes
    shape = tuple(shape)
    if sharding.is_fully_replicated:
        whole = data_callback((slice(None),) * len(shape))
        values = {d: whole for d in sharding._device_assignment}
    else:
        values = {d: data_callback(i)
                  for d, i in sharding.addressable_devices_indices_map(shape).items()}
    first = dtypes.canonicalize_dtype(np.asarray(next(iter(values.values()))).dtype)
    if dtype is not None and dtypes.canonicalize_dtype(dtype) != first:
        raise ValueError("If `dtype` is provided to `jax.make_array_from_callback`, it must match "
                         "the dtype of the addressable shards. Got "
                         f"dtype={dtypes.canonicalize_dtype(dtype)} and shard dtype={first}`.")
    dtype = first
    _check_pieces(list(values.values()), shape, sharding, dtype)
    return _assemble(shape, sharding, {d: np.asarray(v, dtype) for d, v in values.items()},
                     dtype)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding,
                                         arrays: Sequence[Any], *, dtype: Any = None
                                         ) -> ArrayImpl:
    """An Array of `shape` laid out by `sharding` from one Array per device (in the order of
    the sharding's addressable devices)."""
    shape = tuple(shape)
    if not isinstance(arrays, (list, tuple)):
        raise TypeError("jax.make_array_from_single_device_arrays `arrays` argument must be a "
                        f"list or tuple, but got {type(arrays)}.")
    index_map = sharding.addressable_devices_indices_map(shape)
    if len(arrays) != len(index_map):
        raise ValueError(f"Expected {len(index_map)} per-device arrays (this is how many "
                         f"devices are addressable by the sharding), but got {len(arrays)}")
    if dtype is None:
        dtype = arrays[0].dtype
    for a in arrays:
        if a.dtype != dtype:
            raise ValueError("Input buffers to `Array` must have matching dtypes. Got "
                             f"{a.dtype}, expected {dtype} for buffer: {a}")
    _check_pieces(list(arrays), shape, sharding, dtype)
    pieces = {_device_of(a): np.asarray(a) for a in arrays}
    if len(pieces) != len(arrays):
        raise ValueError("When making an array from single-device arrays, the input arrays "
                         "must be from distinct devices, but got device IDs "
                         f"{[_device_of(a).id for a in arrays]}")
    in_arrays = {d.id for d in pieces}
    in_sharding = {d.id for d in index_map}
    if in_arrays != in_sharding:
        message = "Addressable devices and per-device arrays devices do not match."
        if in_sharding - in_arrays:
            message += (f" Sharding contains devices {in_sharding - in_arrays} that are not "
                        "present in per-device arrays.")
        if in_arrays - in_sharding:
            message += (f" Per-device arrays contain devices {in_arrays - in_sharding} that "
                        "are not present in the sharding.")
        raise ValueError(message)
    return _assemble(shape, sharding, pieces, np.dtype(dtype))


# -- out_sharding ------------------------------------------------------------------------------

def canonicalize_sharding(sharding: Any, api_name: str) -> NamedSharding | None:
    """`out_sharding=` as JAX reads it: None (or a sharding over the empty mesh) places
    nothing; a PartitionSpec names the context mesh's axes; every named axis must be Explicit.
    The result's mesh is abstract."""
    if sharding is None:
        return None
    if isinstance(sharding, NamedSharding) and sharding.mesh.empty:
        return None
    if not isinstance(sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(f"`out_sharding` argument of {api_name} only supports instances of "
                        f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: "
                        f"{type(sharding)}")
    context = mesh_lib.get_abstract_mesh()
    if isinstance(sharding, PartitionSpec):
        if context.empty:
            raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                             "allowed. Please pass a NamedSharding instance or enter into a "
                             f"mesh context via `jax.set_mesh`. Got {sharding}")
        sharding = NamedSharding(context, sharding)
    else:
        mesh = sharding.mesh.abstract_mesh
        if (not context.empty and not (mesh.are_all_axes_auto and context.are_all_axes_auto)
                and mesh != context):
            raise ValueError(f"Context mesh {context} should match the mesh of sharding {mesh} "
                             f"passed to {api_name}. This error occurs at source:  "
                             f"{_user_source()}")
        if isinstance(sharding.mesh, Mesh):
            sharding = NamedSharding(mesh, sharding.spec)
    for axis in (*flatten_spec(sharding.spec), *sharding.spec.unreduced,
                 *sharding.spec.reduced):
        if axis is None:
            continue
        kind = sharding.mesh._name_to_type[axis]
        if kind in (AxisType.Auto, AxisType.Manual):
            raise ValueError(
                f"PartitionSpec passed to {api_name} cannot contain axis names that are of type "
                f"Auto or Manual. Got PartitionSpec: {sharding.spec} with axis name: {axis} of "
                f"type: {kind}. This error occurs at source:  {_user_source()}")
    return sharding


def _concrete(sharding: NamedSharding, ndim: int, shape: tuple, dtype: Any,
              given: Any) -> NamedSharding:
    """The concrete sharding an eager result gets: the context mesh (or the mesh `given`
    named), the spec padded with None to the result's rank."""
    mesh = mesh_lib.get_concrete_mesh()
    if mesh.empty and isinstance(given, NamedSharding) and isinstance(given.mesh, Mesh):
        if given.mesh.size != 1:  # JAX compiles for one device outside a mesh context
            raise ValueError(
                f"Length of device assignment 1 is not equal to the size of the mesh "
                f"{given.mesh.size} of aval {_aval_str(shape, dtype, sharding)}. Please enter "
                "your `jit` into a mesh context via `jax.set_mesh`.")
        mesh = given.mesh
    return NamedSharding(mesh, sharding.spec._normalized_spec_for_aval(ndim))


def _aval_str(shape: tuple, dtype: Any, sharding: NamedSharding) -> str:
    """`f32[4@x,4]({Explicit: ('x', 'y')})`: JAX's short aval string with its sharding."""
    from pyjax._src.core import dtypes
    spec = sharding.spec._normalized_spec_for_aval(len(shape)).partitions
    dims = [str(n) if s is None else f"{n}@({','.join(s)})" if isinstance(s, tuple)
            else f"{n}@{s}" for n, s in zip(shape, spec)]
    by_type: dict = {}
    for name, kind in zip(sharding.mesh.axis_names, sharding.mesh.axis_types):
        by_type.setdefault(kind, []).append(name)
    types = {k: tuple(v) for k, v in by_type.items()}
    return f"{dtypes.short_dtype_name(np.dtype(dtype))}[{','.join(dims)}]({types})"


def _place_result(out: Any, sharding: NamedSharding, given: Any) -> Any:
    """Lay out a concrete result (every array leaf) by the canonical `sharding`."""
    from pyjax._src.tree_util import tree_map

    def put(leaf: Any) -> Any:
        if not isinstance(leaf, ArrayImpl):
            return leaf
        target = _concrete(sharding, leaf.ndim, leaf.shape, leaf.dtype, given)
        target.shard_shape(leaf.shape)
        return placed(leaf, target)
    return tree_map(put, out)


def place_created(out: Any, device: Any, out_sharding: Any, api_name: str) -> Any:
    """A created array laid out by `device=` (a Device or Sharding) or `out_sharding=`, as
    JAX's creation functions are; at most one of them may be given."""
    if device is not None and out_sharding is not None:
        raise ValueError(f"Only one of `device` or `out_sharding` can be set. Got {device=} "
                         f"and {out_sharding=}")
    if device is not None:
        return put_leaf(out, device) if isinstance(out, ArrayImpl) else out
    sharding = canonicalize_sharding(out_sharding, api_name)
    return out if sharding is None else _place_result(out, sharding, out_sharding)


def with_out_sharding(api_name: str) -> Callable[[Callable], Callable]:
    """Give a creation function or sampler JAX's keyword-only `out_sharding=` (a NamedSharding
    or a PartitionSpec of the context mesh's Explicit axes; errors named after `api_name`):
    the concrete result is laid out by it, or by a Device/Sharding passed as `device=`."""
    def wrap(fun: Callable) -> Callable:
        sig = inspect.signature(fun)
        takes_device = "device" in sig.parameters

        @functools.wraps(fun)
        def wrapped(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
            device = kwargs.get("device") if takes_device else None
            if out_sharding is None and device is None:
                return fun(*args, **kwargs)
            if device is None:  # checked before computing, as JAX does
                canonicalize_sharding(out_sharding, api_name)
            return place_created(fun(*args, **kwargs), device, out_sharding, api_name)

        params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
        tail = [p for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD]
        params.append(inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY,
                                        default=None, annotation="NamedSharding | P | None"))
        wrapped.__signature__ = sig.replace(parameters=params + tail)
        return wrapped
    return wrap


def _device_of(a: Any) -> Any:
    """The one device a per-device array sits on."""
    devices = a.devices()
    if len(devices) != 1:
        raise ValueError("jax.make_array_from_single_device_arrays requires single-device "
                         f"arrays, but got an array on devices {devices}")
    return next(iter(devices))


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Any = None) -> Any:
    """An Array laid out by `sharding` from this process's data: with one process, its data
    is the whole array (each leaf of a pytree of shardings and data)."""
    from pyjax._src.tree_util import tree_flatten, tree_unflatten
    data, tree = tree_flatten(local_data)
    if isinstance(sharding, Sharding):
        shardings = [sharding] * len(data)
    else:
        shardings = tree_flatten(sharding)[0]
    shapes = ([None] * len(data) if global_shape is None
              else [global_shape] * len(data) if _is_shape(global_shape)
              else tree_flatten(global_shape, is_leaf=_is_shape)[0])
    outs = []
    for value, target, shape in zip(data, shardings, shapes):
        value = np.asarray(value)
        if process_count() > 1:  # every process assembles the global array
            outs.append(put_leaf(_assemble_processes(value, target, shape), target))
            continue
        if shape is not None and tuple(shape) != value.shape:
            raise ValueError(f"When the process holds every device, the local data must be the "
                             f"whole array: got shape {value.shape} for global shape "
                             f"{tuple(shape)}")
        outs.append(put_leaf(value, target))
    return tree_unflatten(tree, outs)


def _assemble_processes(local: np.ndarray, sharding: Any, global_shape: Any) -> np.ndarray:
    """The global array from every process's local block: a process's block is the box its
    devices' shards span (JAX's layout of process-local data), exchanged over MPI."""
    from pyjax._src.parallel import distributed
    from pyjax._src.parallel.devices import process_index
    if global_shape is None:
        raise ValueError("make_array_from_process_local_data needs global_shape when the "
                         "array spans several processes")
    shape = tuple(int(d) for d in global_shape)
    starts = np.zeros(len(shape), np.int64)
    boxes = [idx for dev, idx in sharding.devices_indices_map(shape).items()
             if dev.process_index == process_index()]
    for d in range(len(shape)):
        starts[d] = min((i[d].start or 0) if isinstance(i[d], slice) else 0 for i in boxes)
    everyone = np.asarray(distributed.allgather(local[None], "make_array_from_process_local_data"))
    offsets = np.asarray(distributed.allgather(starts[None], "process offsets"))
    out = np.zeros(shape, local.dtype)
    for block, start in zip(everyone, offsets):
        out[tuple(slice(s, s + n) for s, n in zip(start, block.shape))] = block
    return out


def _is_shape(x: Any) -> bool:
    return isinstance(x, tuple) and all(isinstance(d, (int, np.integer)) for d in x)


# -- jit's in_shardings / out_shardings -------------------------------------------------------

def _jit_targets(shardings: Any, tree_value: Any, what: str) -> list:
    """Per leaf of `tree_value`, its sharding from the prefix `shardings` (PartitionSpecs
    read against the context mesh)."""
    from pyjax._src.transforms.batching import _broadcast_prefix
    targets = _broadcast_prefix(shardings, tree_value, what)
    out = []
    for t in targets:
        if isinstance(t, PartitionSpec):
            mesh = mesh_lib.get_concrete_mesh()
            if mesh.empty:
                raise RuntimeError(
                    f"jit requires a non-empty mesh in context if you are passing "
                    f"`PartitionSpec`s to {what}. You can define a context mesh via "
                    f"`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to {what} and "
                    "then the mesh context manager is not required.")
            t = NamedSharding(mesh, t)
        out.append(t)
    return out


class ShardedJit:
    """`jit(f, in_shardings=..., out_shardings=...)`: the jitted `f` whose arguments must fit
    `in_shardings` (a committed argument laid out otherwise is an error, as in JAX) and whose
    results are laid out by `out_shardings` (each a prefix of the arguments / results)."""

    def __init__(self, jitted: Any, in_shardings: Any, out_shardings: Any):
        self._jitted = jitted
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        functools.update_wrapper(self, jitted, updated=())

    def __getattr__(self, name: str) -> Any:  # lower, trace, eval_shape ... of the jit
        return getattr(self._jitted, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from pyjax._src.tree_util import tree_flatten, tree_unflatten
        if self._in_shardings is not None:
            leaves = tree_flatten(args)[0]
            for leaf, target in zip(leaves, _jit_targets(self._in_shardings, args,
                                                          "in_shardings")):
                if target is not None:
                    _check_jit_arg(leaf, target)
        out = self._jitted(*args, **kwargs)
        if self._out_shardings is None:
            return out
        leaves, tree = tree_flatten(out)
        targets = _jit_targets(self._out_shardings, out, "out_shardings")
        return tree_unflatten(tree, [put_leaf(leaf, t) if t is not None else leaf
                                     for leaf, t in zip(leaves, targets)])


def _check_jit_arg(leaf: Any, target: Sharding) -> None:
    if isinstance(leaf, ArrayImpl) and leaf.committed and leaf.sharding != target:
        raise ValueError(
            "Sharding passed to jit does not match the sharding on the respective arg. Got jit "
            f"sharding: {target},\narg sharding: {leaf.sharding} for arg type: "
            f"{leaf.aval.str_short()}")
    shape = np.shape(leaf)
    if isinstance(target, NamedSharding):
        target.check_compatible_aval(shape)
    target.shard_shape(shape)
