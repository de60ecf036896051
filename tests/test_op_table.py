"""Every primitive, driven by tests/op_table.py: eager vs NumPy, jit vs eager, weak types,
rejected dtypes, and the census of primitives and their rules.

Issues 4 and 5 flip REQUIRE_JVP / REQUIRE_TRANSPOSE / REQUIRE_BATCH when their rules land.
"""
from __future__ import annotations

import contextlib
from typing import Any, Sequence

import numpy as np
import pytest

import pyjax
from pyjax import lax
from pyjax._src.core.primitive import registry

from op_table import (
    ALL, DTYPES, INT, OPS, BY_PRIM, OpCase, linear_primitives, make_args, reference, x64_mode)

#: flip to True when issue 4 (autodiff) / issue 5 (batching) fill the rule slots
REQUIRE_JVP = True
REQUIRE_TRANSPOSE = True
REQUIRE_BATCH = True

#: primitives that cannot be called on arrays alone, with the reason (and whether they are
#: linear, i.e. need a transpose rule)
NOT_DIRECTLY_CALLABLE: dict[str, tuple[str, bool]] = {
    "jit": ("higher-order: binds a closed jaxpr built by pyjax.jit; exercised by every jit "
            "test in this file", True),
    "pjit": ("higher-order: JAX's name for the jit primitive", True),
    # issue 15: shard_map (its rules run the body's expansion: tests/test_shard_map.py)
    "shard_map": ("higher-order: carries a per-block body jaxpr over a Mesh; "
                  "tests/test_shard_map.py compares it with JAX on 8 devices", False),
    **{name: ("crosses between the processes of an MPI job; tests/distributed", linear)
       for name, linear in (("process_allreduce", True), ("process_allgather", True),
                            ("process_alltoall", True), ("process_permute", True))},
    "closed_call": ("higher-order: calls a closed jaxpr", True),
    "custom_jvp_call": ("higher-order: carries a function and its custom JVP", False),
    "custom_vjp_call": ("higher-order: carries a function and its custom VJP", False),
    "linear_call": ("higher-order: carries a linear function's jaxpr and its transpose; "
                    "tests/test_linear_call.py", True),
    "custom_lin": ("the tangent of a custom_vjp call: only exists inside linearized jaxprs; "
                   "tests/test_custom_derivatives.py", True),
    "remat2": ("higher-order (jax.checkpoint): carries a body jaxpr to rematerialize; "
                   "tests/test_checkpoint.py", True),
    **{name: ("collective: needs a named vmap/pmap axis; tests/test_pmap.py compares it with "
              "JAX on 4 devices", linear)
       for name, linear in (("psum", True), ("pmax", False), ("pmin", False),
                            ("axis_index", False), ("all_gather", True), ("ppermute", True),
                            ("psum_scatter", True), ("all_to_all", True))},
    **{name: ("check_vma's typing of a shard_map body (a cast, and psum of varying values): "
              "needs a manual mesh axis; tests/test_shard_map.py compares its jaxprs and values "
              "with JAX", True) for name in ("pvary", "psum_invariant")},
    **{name: ("collective: needs a named vmap/pmap axis; tests/test_collectives_extra.py "
              "compares it with JAX on 4 devices", linear)
       for name, linear in (("pbroadcast", True), ("psend", False), ("precv", False),
                            ("ragged_all_to_all", False))},
    "sharding_constraint": ("takes a Sharding param; tests/test_collectives_extra.py compares "
                            "its values and jaxprs with JAX", True),
    "device_put": ("jax.device_put under a transformation: takes Devices and Shardings as "
                   "params; tests/test_sharding.py compares its jaxprs, values and layouts "
                   "with JAX", True),
    "reshard": ("takes a NamedSharding over a mesh with Explicit axes; tests/test_sharding.py "
                "compares its jaxprs (with vmap's), values and errors with JAX", True),
    **{name: ("tokens are not arrays; tests/test_lax_misc.py checks them against JAX", False)
       for name in ("create_token", "after_all")},
    "platform_index": ("no operands: staged by lax.platform_dependent; tests/test_lax_misc.py "
                       "compares its jaxpr with JAX's", False),
    "empty2": ("no operands: the placeholder that grad of cond stages; "
               "tests/test_control_flow_jaxprs.py prints it as JAX does", False),
    # host callbacks (issue 12): their params hold Python functions; tests/test_debug_callbacks.py
    # compares their output, values and jaxprs with JAX under jit, vmap and grad
    **{name: ("host callback: takes a Python function param; tests/test_debug_callbacks.py",
              False)
       for name in ("debug_callback", "debug_print", "pure_callback", "io_callback",
                    "inspect_sharding")},
    # references and hijax calls (issue 13): operands are refs or the user's hi-level types
    **{name: ("a reference operation: tests/test_refs.py compares it with JAX eagerly and "
              "under jit", False)
       for name in ("new_ref", "get", "swap", "addupdate", "freeze", "empty_ref", "free_ref")},
    "call_hi_primitive": ("binds a user's VJPHiPrimitive: tests/test_hijax.py", False),
    "call_hi_primitive_linearized": ("the linearized VJPHiPrimitive call, transposed by its "
                                     "vjp_bwd: tests/test_hijax.py", True),
    "custom_vmap_call": ("higher-order: binds a custom_vmap body and its vmap rule; "
                         "tests/test_custom_batching.py compares it with JAX", False),
    # checkify (issue 13)
    "check": ("effectful: holds an Error's leaves and treedef; tests/test_checkify.py compares "
              "it with JAX eagerly, under jit, vmap, grad and checkify", False),
    "cond": ("control flow: carries branch jaxprs", True),
    "while": ("control flow: carries cond and body jaxprs", False),
    "scan": ("control flow: carries a body jaxpr", True),
    # implicitly differentiated solves (primitives/control_flow/solves.py)
    "custom_linear_solve": ("carries matvec/vecmat/solve/transpose_solve jaxprs; "
                            "tests/test_custom_solves.py", True),
    **{name: ("PRNG: operands are key arrays or key data; tests/test_random.py checks it "
              "against recorded JAX values", False)
       for name in ("threefry2x32", "random_seed", "random_split", "random_fold_in",
                    "random_bits", "random_wrap", "random_unwrap", "random_clone",
                    "random_gamma")},
}


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def instances(cases: Sequence[OpCase]) -> list[Any]:
    return [pytest.param((c, d), id=f"{c.name}-{d}") for c in cases for d in c.dtypes]


@pytest.fixture
def inst(request: Any) -> Any:
    """One (entry, dtype); turns jax_enable_x64 on for 64-bit dtypes and restores it after."""
    case, dtype = request.param
    with x64_mode(True) if case.needs_x64(dtype) else contextlib.nullcontext():
        yield case, dtype


def as_array(x: np.ndarray, weak: bool = False) -> Any:
    """A pyjax array holding exactly `x` (dtype kept), optionally weakly typed."""
    return lax.convert_element_type(x, x.dtype, weak_type=weak)


def call(case: OpCase, dtype: str, args: Sequence[Any]) -> Any:
    return case.fn(dtype=dtype) if case.pass_dtype else case.fn(*args)


def traced_fn(case: OpCase, dtype: str) -> Any:
    if case.pass_dtype:
        return lambda: case.fn(dtype=dtype)
    return lambda *xs: case.fn(*xs)


def _wide(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "biu":
        return x
    return x.astype(np.float64)


def results(case: OpCase, out: Any) -> list[Any]:
    """The results of one call as a list (one element unless the entry is `multiple`)."""
    if case.multiple:
        assert isinstance(out, (list, tuple)), f"{case.name}: expected several results"
        return list(out)
    return [out]


def check_value(case: OpCase, dtype: str, got: Any, want: Any, what: str) -> None:
    """`got` matches the reference `want` (lists of them for multiple-results entries)."""
    gots, wants = results(case, got), (want if case.multiple else [want])
    assert len(gots) == len(wants), f"{what}: {len(gots)} results, expected {len(wants)}"
    for k, (g, w) in enumerate(zip(gots, wants)):
        check_one(case, g, w, what if len(wants) == 1 else f"{what} result {k}")


def check_one(case: OpCase, got: Any, want: np.ndarray, what: str) -> None:
    """`got` (a pyjax array) has `want`'s shape and dtype, and its values within tolerance."""
    assert isinstance(got, pyjax.Array), f"{what}: result is {type(got).__name__}"
    assert tuple(got.shape) == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    got_np = np.asarray(got)
    assert got_np.dtype == want.dtype, f"{what}: buffer dtype {got_np.dtype} != {want.dtype}"
    out = want.dtype.name
    if out in INT or out == "bool":
        np.testing.assert_array_equal(got_np, want, err_msg=what)
    else:
        rtol, atol = case.tolerance(out)
        np.testing.assert_allclose(_wide(got_np), _wide(want), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)


def same_results(case: OpCase, a: Any, b: Any, what: str) -> None:
    ra, rb = results(case, a), results(case, b)
    assert len(ra) == len(rb), f"{what}: {len(ra)} results vs {len(rb)}"
    for x, y in zip(ra, rb):
        same_result(x, y, what)


def same_result(a: Any, b: Any, what: str) -> None:
    """Two pyjax results are identical: dtype, shape, weak type, and values (NaNs alike)."""
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {a.shape} != {b.shape}"
    assert a.weak_type == b.weak_type, f"{what}: weak_type {a.weak_type} != {b.weak_type}"
    an, bn = np.asarray(a), np.asarray(b)
    if an.dtype.kind in "biu":
        np.testing.assert_array_equal(an, bn, err_msg=what)
    else:
        np.testing.assert_allclose(_wide(an), _wide(bn), rtol=1e-6, atol=0, equal_nan=True,
                                   err_msg=what)


# ---------------------------------------------------------------------------------------------
# (1) eager vs NumPy, and the weak-type rule
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inst", instances(OPS), indirect=True)
def test_eager_matches_numpy(inst: Any) -> None:
    case, dtype = inst
    for shapes in case.shapes:
        args = make_args(case, dtype, shapes)
        what = f"{case.name}[{dtype}] shapes={shapes}"
        out = call(case, dtype, [as_array(a) for a in args])
        check_value(case, dtype, out, reference(case, dtype, args), what)
        for r in results(case, out):
            assert r.weak_type is False, f"{what}: strong inputs gave a weak result"


@pytest.mark.parametrize("inst", instances([c for c in OPS if c.nargs]), indirect=True)
def test_weak_type_rule(inst: Any) -> None:
    """Result weak only when all (participating) inputs are weak; values unaffected."""
    case, dtype = inst
    shapes = case.shapes[-1]
    args = make_args(case, dtype, shapes)
    want = reference(case, dtype, args)
    patterns = [[True] * case.nargs] + [
        [j != i for j in range(case.nargs)] for i in range(case.nargs)]
    for flags in patterns:
        what = f"{case.name}[{dtype}] weak inputs {flags}"
        out = call(case, dtype, [as_array(a, w) for a, w in zip(args, flags)])
        check_value(case, dtype, out, want, what)
        for k, r in enumerate(results(case, out)):
            assert r.weak_type == case.expected_weak(flags, k), (
                f"{what}: result {k} weak_type {r.weak_type}, expected "
                f"{case.expected_weak(flags, k)}")


# ---------------------------------------------------------------------------------------------
# (2) jit equals eager; make_jaxpr shows the primitive
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inst", instances(OPS), indirect=True)
def test_jit_matches_eager(inst: Any) -> None:
    case, dtype = inst
    f = traced_fn(case, dtype)
    for shapes in case.shapes:
        args = [as_array(a) for a in make_args(case, dtype, shapes)]
        what = f"{case.name}[{dtype}] shapes={shapes}"
        eager = call(case, dtype, args)
        jitted = pyjax.jit(f)(*args)
        same_results(case, jitted, eager, what + " jit vs eager")
        closed = pyjax.make_jaxpr(f)(*args)
        names = [e.primitive.name for e in closed.jaxpr.eqns]
        if case.binds_primitive(dtype):
            assert case.prim in names, f"{what}: jaxpr has {names}, expected {case.prim}"
        avals = [(tuple(a.shape), a.dtype, a.weak_type) for a in closed.out_avals]
        assert avals == [(tuple(r.shape), r.dtype, r.weak_type) for r in results(case, eager)], (
            f"{what}: out avals {closed.out_avals}")


@pytest.mark.parametrize("inst", instances([c for c in OPS if c.nargs]), indirect=True)
def test_jit_weak_inputs(inst: Any) -> None:
    """abstract_eval's weak-type rule agrees with eager on all-weak inputs."""
    case, dtype = inst
    args = [as_array(a, True) for a in make_args(case, dtype, case.shapes[-1])]
    eager = call(case, dtype, args)
    jitted = pyjax.jit(traced_fn(case, dtype))(*args)
    same_results(case, jitted, eager, f"{case.name}[{dtype}] weak inputs, jit vs eager")


def _pending(args: Sequence[Any]) -> list:
    """`args` as Arrays still held by async dispatch's worker (PendingArrays: what a large
    jitted call returns), whose types and values are those of `args`."""
    from pyjax._src.backend import async_dispatch
    return async_dispatch.submit(lambda *bufs: list(bufs), [np.asarray(a) for a in args],
                                 [a.aval for a in args])


@pytest.mark.parametrize("inst", instances([c for c in OPS if c.nargs]), indirect=True)
def test_eager_on_pending_operands(inst: Any) -> None:
    """An Array a jitted call returned before computing it takes every eager path as the
    computed Array would: values, dtypes and weak types alike (strong and weak operands)."""
    case, dtype = inst
    for weak in (False, True):
        args = [as_array(a, weak) for a in make_args(case, dtype, case.shapes[-1])]
        same_results(case, call(case, dtype, _pending(args)), call(case, dtype, args),
                     f"{case.name}[{dtype}] weak={weak}, pending operands vs computed")


# ---------------------------------------------------------------------------------------------
# dtypes outside an entry's list are rejected (TypeError, eager and traced)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [c for c in OPS if c.rejected_dtypes()], ids=lambda c: c.name)
def test_rejects_other_dtypes(case: OpCase) -> None:
    accepted = []
    for dtype in case.rejected_dtypes():
        with x64_mode(True) if case.needs_x64(dtype) else contextlib.nullcontext():
            args = [as_array(a) for a in make_args(case, dtype, case.shapes[-1])]
            for mode in ("eager", "jaxpr"):
                try:
                    if mode == "eager":
                        call(case, dtype, args)
                    else:
                        pyjax.make_jaxpr(traced_fn(case, dtype))(*args)
                except TypeError:
                    continue
                accepted.append(f"{dtype} ({mode})")
    assert not accepted, f"{case.name} accepted dtypes JAX rejects: {accepted}"


# ---------------------------------------------------------------------------------------------
# (3) census: every primitive has impl and abstract_eval and an op-table entry
# ---------------------------------------------------------------------------------------------

def test_every_primitive_has_impl_and_abstract_eval() -> None:
    missing = sorted(f"{name}.{rule}" for name, prim in registry.items()
                     for rule in ("impl", "abstract_eval") if getattr(prim, rule) is None)
    assert not missing, f"primitives without rules: {missing}"


def test_every_primitive_is_in_the_op_table() -> None:
    missing = sorted(set(registry) - set(BY_PRIM) - set(NOT_DIRECTLY_CALLABLE))
    assert not missing, (f"primitives with no entry in tests/op_table.py: {missing} (add an "
                         "OpCase, or name them in NOT_DIRECTLY_CALLABLE with the reason)")
    unknown = sorted(set(BY_PRIM) - set(registry))
    assert not unknown, f"op-table entries for primitives that do not exist: {unknown}"


def test_op_table_is_well_formed() -> None:
    for case in OPS:
        assert case.dtypes and set(case.dtypes) <= set(DTYPES), case.name
        assert all(len(s) == case.nargs for s in case.shapes), case.name
        assert all(0 <= i < case.nargs for i in case.linear), case.name
        if case.arg_dtypes is not None:
            assert len(case.arg_dtypes) == case.nargs, case.name
        assert case.weak in ("all", "never", "each"), case.name
        assert not set(case.rejected_dtypes()) & set(case.dtypes), case.name


# ---------------------------------------------------------------------------------------------
# (4) rule census for the transformation issues
# ---------------------------------------------------------------------------------------------

#: primitives that can never see a batched operand, with the reason
NO_BATCH_RULE = {"iota": "no operands: never batched",
                 "platform_index": "no operands: never batched",
                 "empty2": "no operands: never batched",
                 **{name: "not yet: references under vmap (JAX has these rules)"
                    for name in ("new_ref", "get", "swap", "addupdate", "freeze", "empty_ref", "free_ref")},
                 "linear_call": "JAX 0.10.2 has no batching rule for linear_call (vmap raises "
                                "its NotImplementedError)",
                 "call_hi_primitive": "not yet: a VJPHiPrimitive's batching rule is not called"}

#: primitives JAX 0.10.2 gives no differentiation rule (pyjax then raises JAX's error)
NO_JVP_RULE = {"psend": "JAX's psend has no jvp: differentiating it is JAX's NotImplementedError",
               "precv": "JAX's precv has no jvp (its value comes from a token)",
               **{name: "not yet: references under jvp (JAX has these rules)"
                  for name in ("new_ref", "get", "swap", "addupdate", "freeze", "empty_ref", "free_ref")},
               "scaled_dot": "JAX's scaled_dot has no jvp (documented as not differentiable)"}


def rule_census() -> dict[str, list[str]]:
    """primitive name -> missing rules among impl, abstract_eval, jvp, transpose (linear
    primitives only), batch.  Primitives with nothing missing are left out."""
    linear = linear_primitives() | {n for n, (_, lin) in NOT_DIRECTLY_CALLABLE.items() if lin}
    census: dict[str, list[str]] = {}
    for name in sorted(registry):
        prim = registry[name]
        wanted = ["impl", "abstract_eval"] + ([] if name in NO_JVP_RULE else ["jvp"])
        if name in linear:
            wanted.append("transpose")
        if name not in NO_BATCH_RULE:
            wanted.append("batch")
        missing = [rule for rule in wanted if getattr(prim, rule, None) is None]
        if "batch" in missing and prim.batch_collective is not None:
            missing.remove("batch")  # collectives batch through batch_collective
        if missing:
            census[name] = missing
    return census


def required_rules() -> set[str]:
    required = {"impl", "abstract_eval"}
    if REQUIRE_JVP:
        required.add("jvp")
    if REQUIRE_TRANSPOSE:
        required.add("transpose")
    if REQUIRE_BATCH:
        required.add("batch")
    return required


def test_rule_census() -> None:
    census = rule_census()
    counts: dict[str, int] = {}
    for missing in census.values():
        for rule in missing:
            counts[rule] = counts.get(rule, 0) + 1
    print(f"\nrule census over {len(registry)} primitives; missing: {counts}")
    for name, missing in census.items():
        print(f"  {name}: {', '.join(missing)}")
    required = required_rules()
    failing = {n: [r for r in m if r in required] for n, m in census.items()}
    failing = {n: m for n, m in failing.items() if m}
    assert not failing, f"primitives missing required rules {sorted(required)}: {failing}"
