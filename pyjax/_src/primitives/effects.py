"""Primitives that order or keep computations rather than compute: optimization_barrier (an
identity over a pytree), tokens (create_token, after_all) and dce_sink (marks values used).

Tokens have the abstract value `Tok`, printed as JAX prints it; concrete tokens are `Token`s.
"""
from __future__ import annotations

from typing import Any, Sequence

from pyjax._src.core.avals import pytype_aval_mappings
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.transforms import ad
from pyjax._src.tree_util import tree_flatten, tree_map, tree_unflatten


# -- optimization_barrier ---------------------------------------------------------------------

optimization_barrier_p = make_primitive("optimization_barrier", lambda *xs: list(xs),
                                        lambda *avals: list(avals), multiple_results=True)


def optimization_barrier(operand: Any, /) -> Any:
    """The identity on a pytree of values; compilers may not move computation across it
    (here it only has to exist in jaxprs and under transformations)."""
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def _barrier_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    tangents = [ad.instantiate(t) for t in tangents]
    return optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents)


def _barrier_transpose(cts: Sequence[Any], *primals: Any) -> list:
    return optimization_barrier_p.bind(*[ad.instantiate(c) for c in cts])


optimization_barrier_p.jvp = _barrier_jvp
optimization_barrier_p.transpose = _barrier_transpose
optimization_barrier_p.batch = lambda vals, dims: (optimization_barrier_p.bind(*vals),
                                                   list(dims))


# -- tokens -------------------------------------------------------------------------------------

class AbstractToken:
    """The abstract value of every token."""
    shape: tuple = ()
    ndim = 0
    weak_type = False

    def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"


abstract_token = AbstractToken()


class Token:
    """A concrete token: carries no data, only sequencing."""

    def block_until_ready(self) -> "Token":
        return self


pytype_aval_mappings[Token] = lambda _: abstract_token  # (a jit argument, typed by it)


def _token_eager(prim: Primitive, args: tuple, params: dict) -> Token:
    prim.abstract_eval(*[abstract_token if isinstance(a, Token) else a for a in args],
                       **params)
    return Token()


def _after_all_abstract(*avals: Any) -> AbstractToken:
    if any(a is not abstract_token for a in avals):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


create_token_p = make_primitive("create_token", lambda: Token(), lambda: abstract_token)
create_token_p.eager = _token_eager
after_all_p = make_primitive("after_all", lambda *tokens: Token(), _after_all_abstract)
after_all_p.eager = _token_eager
for _prim in (create_token_p, after_all_p):
    ad.defjvp_zero(_prim)  # tokens carry no values to differentiate
    _prim.batch = (lambda p: lambda vals, dims: (p.bind(*vals), None))(_prim)


def create_token(_: Any = None) -> Any:
    """A fresh token (the argument is ignored, kept for compatibility)."""
    return create_token_p.bind()


def after_all(*operands: Any) -> Any:
    """A token ordered after all the given tokens."""
    return after_all_p.bind(*operands)


# -- dce_sink -----------------------------------------------------------------------------------

dce_sink_p = make_primitive("dce_sink", lambda x, **_: [], lambda x, **_: [],
                            multiple_results=True)
dce_sink_p.effectful = True  # it exists to keep its operand alive: dead-code removal keeps it
ad.deflinear(dce_sink_p, lambda cts, x, **_: [ad.Zero(x.aval)])  # no outputs: no cotangent
dce_sink_p.batch = lambda vals, dims, **_: ([], [])  # JAX drops the sink under vmap


def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Mark every leaf of `val` as used, so that dead-code elimination keeps what computes
    it (one `dce_sink` equation per leaf)."""
    tree_map(lambda x: dce_sink_p.bind(x, prevent_mlir_dce=prevent_mlir_dce), val)
