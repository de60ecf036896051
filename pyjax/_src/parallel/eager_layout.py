"""Where an eager operation's results live when its operands are laid out over a mesh.

JAX runs an eager operation as a jit of that one primitive, so its results follow the same
sharding rules as a jitted program's: `x * 2` of an array split P('x', 'y') is split so too.
While some Array placed by a NamedSharding is alive this module is `Primitive.bind`'s eager
hook: it computes the primitive as usual and lays each result out by propagation.py's rule
for the primitive (replicated over the mesh where no rule speaks).  jnp's eager fast paths
(plans) step aside for laid-out operands (`any_placed`), so every primitive goes through
`bind`.  With none alive the hook is off: other eager calls pay nothing (with one alive, a
look at each operand's `_sharding`, which every Array has set, None until placed).
"""
from __future__ import annotations

import types
import weakref
from typing import Any

from pyjax._src.core import primitive
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.parallel import propagation
from pyjax._src.parallel.sharding import NamedSharding, placed


def _layout(x: Any) -> NamedSharding | None:
    sharding = getattr(x, "_sharding", None) if type(x) is ArrayImpl else None
    return sharding if type(sharding) is NamedSharding else None


def any_placed(args: Any, kwargs: dict | None = None) -> bool:
    """Whether some Array among `args` and keyword values, or in a list or tuple of them
    (concatenate's operands), is laid out over a mesh."""
    for a in (*args, *kwargs.values()) if kwargs else args:
        if type(getattr(a, "_sharding", None)) is NamedSharding:
            if type(a) is ArrayImpl:
                return True
        elif type(a) in (list, tuple) and any(_layout(b) is not None for b in a):
            return True
    return False


def _aval(x: Any) -> Any:
    if type(x) is ArrayImpl:
        return ShapedArray(x._buf.shape, x._buf.dtype, x._weak)
    return getattr(x, "aval", None) or ShapedArray((), type(x))


def lay_out(prim: Any, args: tuple, params: dict) -> Any:
    """`prim` applied eagerly with its results laid out as its operands' layouts say; None
    when no operand is laid out over a mesh (the caller computes as usual)."""
    for a in args:  # (the common case, no operand laid out, answered first)
        if type(getattr(a, "_sharding", None)) is NamedSharding and type(a) is ArrayImpl:
            break
    else:
        return None
    layouts = [_layout(a) for a in args]
    mesh = next(s.mesh for s in layouts if s is not None)
    out = prim.run_eager(args, params)
    outs = list(out) if prim.multiple_results else [out]
    eqn = types.SimpleNamespace(
        primitive=prim, params=params,
        invars=[types.SimpleNamespace(aval=_aval(a)) for a in args],
        outvars=[types.SimpleNamespace(aval=_aval(o)) for o in outs])
    ins = [None if s is None or s.mesh != mesh else
           propagation.spec_entries(s, len(s_aval.aval.shape))
           for s, s_aval in zip(layouts, eqn.invars)]
    specs = propagation.eqn_specs(eqn, ins, propagation.mesh_sizes(mesh))
    specs = specs or [None] * len(outs)
    shardings = propagation.shardings_on(mesh, specs, [o.aval for o in eqn.outvars])
    laid = [placed(o, s) if isinstance(o, ArrayImpl) else o for o, s in zip(outs, shardings)]
    return laid if prim.multiple_results else laid[0]


#: per Array placed by a NamedSharding and not yet collected, a weak reference to it (by id)
_alive: dict = {}


def track(x: ArrayImpl) -> None:
    """Count `x`, just placed by a NamedSharding, until it is collected: the hook is on while
    any such Array lives.  pmap counts its every result, so this is kept cheap: a weak
    reference with a callback and no lock (weakref.finalize and a lock took 2-3 us a call).
    Each step is atomic under the GIL; `_collected` looks again after turning the hook off,
    so a result counted meanwhile by another thread turns it back on (at worst the hook stays
    on with nothing alive until the next collection: slower, never wrong)."""
    ref = weakref.ref(x, _collected)
    _alive[id(ref)] = ref
    primitive.eager_layout = lay_out


def _collected(ref: weakref.ref) -> None:
    del _alive[id(ref)]
    if not _alive:
        primitive.eager_layout = None
        if _alive:
            primitive.eager_layout = lay_out
