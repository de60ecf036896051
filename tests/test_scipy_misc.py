"""jax.scipy's smaller submodules: signal, ndimage, integrate, interpolate, cluster.vq, fft,
sparse.linalg and spatial.transform (pyjax/_src/scipy/...).

(1) make_jaxpr prints what JAX 0.10.2 printed, errors carry JAX's class and text, and eager
    results have JAX's dtype, weak type, shape and values (tests/data/scipy_misc.json,
    recorded by tests/oracle/record_scipy_misc.py), x64 off and on;
(2) values against SciPy in float64;
(3) derivatives (numerical, order 2), and jit/vmap against eager loops.
"""
from __future__ import annotations

import functools
import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import scipy.cluster.vq
import scipy.fft
import scipy.integrate
import scipy.interpolate
import scipy.ndimage
import scipy.signal
from scipy.spatial.transform import Rotation as SpRotation
from scipy.spatial.transform import Slerp as SpSlerp

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.cluster.vq as jvq
import pyjax.scipy.fft as jfft
import pyjax.scipy.integrate as jintegrate
import pyjax.scipy.interpolate as jinterp
import pyjax.scipy.ndimage as jndimage
import pyjax.scipy.signal as jsignal
import pyjax.scipy.sparse.linalg as jsparse
from pyjax import lax
from pyjax.scipy.spatial.transform import Rotation, Slerp
from pyjax.test_util import check_grads

from op_table import x64_mode
from recorded import by_name, load

from record_scipy_misc import cases, value_of

RECORDS = by_name(load("scipy_misc.json")["records"])


@functools.lru_cache(maxsize=None)
def _cases(x64: bool) -> dict[str, tuple[Callable, tuple, bool]]:
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: (fn, args, traced) for name, fn, args, traced in
                cases(pyjax, jnp, lax, np)}


NAMES = list(_cases(False))

# ---------------------------------------------------------------------------------------------
# (1) recorded jaxprs, errors and eager values
# ---------------------------------------------------------------------------------------------

_SCATTER_INDEX = ("x.at[i].set with a weak-typed traced index: jnp indexing does not stage "
                  "JAX's convert_element_type of the index before the scatter")
_VECMAT_CONSTS = ("custom_linear_solve: the transposed matvec's constants enter the solve "
                  "jaxpr after the solve's own (JAX: before)")
_GRAD_OF_JIT = ("grad through JAX's jitted helpers (_pad, _where, _map_coordinates, "
                "searchsorted...): JAX's partial evaluation passes known outputs of the jit call "
                "out as residuals and shares equal jvp bodies; pyjax inlines them")
_WHILE_DCE = ("while_loop with a loop-invariant carry: pyjax drops the body's dead equations "
              "when it moves the carry to a constant, JAX keeps them")
#: recorded jaxprs pyjax prints differently, with the part of pyjax (outside jax.scipy) at
#: fault; strict, so a case that starts matching must leave this table
KNOWN_DIFFERENCES: dict[str, str] = {
    "rotation_as_euler_xyz": _SCATTER_INDEX,
    "rotation_as_euler_degrees": _SCATTER_INDEX,
    "grad_fftconvolve": _GRAD_OF_JIT, "grad_welch": _GRAD_OF_JIT,
    "grad_rgi": _GRAD_OF_JIT,
    "bicgstab": _VECMAT_CONSTS,
    "gmres_incremental": _WHILE_DCE,
}


#: known differences under one x64 setting only
_ONLY_X32 = {"rotation_as_euler_degrees"}


def _jaxpr_params() -> list[Any]:
    params = []
    for name in NAMES:
        if not _cases(False)[name][2]:
            continue
        for x64 in (False, True):
            known = name in KNOWN_DIFFERENCES and not (x64 and name in _ONLY_X32)
            marks = ([pytest.mark.xfail(reason=KNOWN_DIFFERENCES[name], strict=True)]
                     if known else [])
            params.append(pytest.param(name, x64, id=f"{name}-{'x64' if x64 else 'x32'}",
                                       marks=marks))
    return params


def _sorted_sets(message: str) -> str:
    """A message with each printed set of strings sorted (their order varies per process)."""
    return re.sub(r"\{('[^{}]*')\}",
                  lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def _check_error(info: Any, want: dict) -> None:
    assert type(info.value).__name__ == want["type"]
    assert _sorted_sets(str(info.value)) == _sorted_sets(want["message"])


@pytest.mark.parametrize("name,x64", _jaxpr_params())
def test_jaxpr_matches_jax(name: str, x64: bool) -> None:
    record = RECORDS[(name, x64)]
    fn, args, _ = _cases(x64)[name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in record:
            with pytest.raises(Exception) as info:
                pyjax.make_jaxpr(fn)(*args)
            _check_error(info, record["error"])
        else:
            got = str(pyjax.make_jaxpr(fn)(*args))
            assert got == record["jaxpr"], f"\n--- pyjax\n{got}\n--- JAX\n{record['jaxpr']}"


#: relative tolerances (of the largest magnitude) for float32 results that JAX computes with
#: other roundings: iterative solvers amplify them
_LOOSE = {"cg": 1e-4, "bicgstab": 1e-4, "gmres": 1e-4, "grad_cg": 1e-4, "grad_gmres": 1e-4,
          "vmap_cg": 1e-4}


def _close(name: str, got: Any, want: Any) -> None:
    if want is None or isinstance(want, list):
        assert (got is None) if want is None else len(got) == len(want)
        for g, w in zip(got or [], want or []):
            _close(name, g, w)
        return
    assert (got["dtype"], got["weak_type"], got["shape"]) == (
        want["dtype"], want["weak_type"], want["shape"])
    g, w = np.array(got["values"], np.float64), np.array(want["values"], np.float64)
    if want["dtype"] in ("float64", "complex128"):
        tol = 1e-11
    else:
        tol = next((t for key, t in _LOOSE.items() if name.startswith(key)), 2e-5)
    scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0)))
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("name", NAMES)
def test_eager_value_matches_jax(name: str, x64: bool) -> None:
    record = RECORDS[(name, x64)]
    fn, args, _ = _cases(x64)[name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "eager_error" in record:
            with pytest.raises(Exception) as info:
                fn(*args)
            _check_error(info, record["eager_error"])
        else:
            _close(name, value_of(fn(*args), np), record["value"])


def test_public_modules_export_jax_names() -> None:
    """Each module holds exactly JAX 0.10.2's public names."""
    def public(module: Any) -> set[str]:
        return {n for n in dir(module) if not n.startswith("_")}
    assert public(jsignal) == {"convolve", "convolve2d", "correlate", "correlate2d", "csd",
                               "detrend", "fftconvolve", "istft", "stft", "welch"}
    assert public(jfft) == {"dct", "dctn", "idct", "idctn"}
    assert public(jsparse) == {"bicgstab", "cg", "gmres"}
    assert public(jndimage) == {"map_coordinates"}
    assert public(jintegrate) == {"trapezoid"}
    assert public(jinterp) == {"RegularGridInterpolator"}
    assert public(jvq) == {"vq"}
    assert pyjax.scipy.cluster.vq is jvq and pyjax.scipy.sparse.linalg is jsparse
    assert pyjax.scipy.spatial.transform.Rotation is Rotation


# ---------------------------------------------------------------------------------------------
# (2) values against SciPy (float64)
# ---------------------------------------------------------------------------------------------

RNG = np.random.default_rng(12)


def _allclose(got: Any, want: Any, tol: float = 1e-10) -> None:
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype or got.dtype in (np.float64, np.complex128)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((9,), (4,)), ((4,), (9,)), ((5, 6), (3, 2)),
                                    ((3, 2), (5, 6)), ((4, 4), (4, 4)), ((3, 4, 5), (2, 1, 3))])
def test_convolve_correlate_against_scipy(x64: Any, mode: str, shapes: tuple) -> None:
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    c = b + 1j * RNG.standard_normal(shapes[1])
    for method in ("direct", "fft"):
        _allclose(jsignal.convolve(a, b, mode, method=method),
                  scipy.signal.convolve(a, b, mode, method="direct"))
        _allclose(jsignal.correlate(a, c, mode, method=method),
                  scipy.signal.correlate(a, c, mode, method="direct"))
    _allclose(jsignal.fftconvolve(a, c, mode), scipy.signal.fftconvolve(a, c, mode))
    if a.ndim == 2:
        _allclose(jsignal.convolve2d(a, c, mode), scipy.signal.convolve2d(a, c, mode))
        _allclose(jsignal.correlate2d(c, a, mode), scipy.signal.correlate2d(c, a, mode))
        _allclose(jsignal.correlate2d(a, c, mode), scipy.signal.correlate2d(a, c, mode))


def test_fftconvolve_axes_against_scipy(x64: Any) -> None:
    a, b = RNG.standard_normal((4, 7, 3)), RNG.standard_normal((4, 3, 3))
    for axes in ((1,), (0, 1), -2):
        want = scipy.signal.fftconvolve(a, b if axes != (0, 1) else b[:1], axes=axes)
        _allclose(jsignal.fftconvolve(a, b if axes != (0, 1) else b[:1], axes=axes), want)


@pytest.mark.parametrize("kwargs", [{}, {"type": "constant"}, {"axis": 0},
                                    {"bp": [3, 11], "axis": 0}, {"bp": 2},
                                    {"type": "constant", "axis": 0}])
def test_detrend_against_scipy(x64: Any, kwargs: dict) -> None:
    data = RNG.standard_normal((16, 3)) + np.arange(16)[:, None] * 0.3
    _allclose(jsignal.detrend(data, **kwargs), scipy.signal.detrend(data, **kwargs), 1e-9)


_STFT_KWARGS = [
    {"nperseg": 16},
    {"nperseg": 10, "noverlap": 3, "nfft": 12, "boundary": "even", "detrend": "linear"},
    {"nperseg": 8, "boundary": "odd", "padded": False, "return_onesided": False,
     "window": "hamming"},
    {"nperseg": 7, "boundary": "constant", "fs": 3.0, "window": ("tukey", 0.3)},
    {"nperseg": 9, "boundary": None, "detrend": "constant", "window": np.hanning(9)},
    {"nperseg": 1, "noverlap": 0, "boundary": None, "padded": False},
]


@pytest.mark.parametrize("kwargs", _STFT_KWARGS)
def test_stft_istft_against_scipy(x64: Any, kwargs: dict) -> None:
    x = RNG.standard_normal((2, 45))
    for got, want in zip(jsignal.stft(x, **kwargs), scipy.signal.stft(x, **kwargs)):
        _allclose(got, want)
    _, _, Z = scipy.signal.stft(x, **kwargs)
    if kwargs.get("boundary", "zeros") is not None and kwargs.get("padded", True):
        keep = ("nperseg", "noverlap", "nfft", "window", "fs", "return_onesided")
        ikw = {k: v for k, v in kwargs.items() if k in keep}
        ikw["input_onesided"] = ikw.pop("return_onesided", True)
        if ikw["nperseg"] % 2 and ikw["input_onesided"]:
            ikw.setdefault("nfft", ikw["nperseg"])  # JAX's istft drops an odd default nfft
        for got, want in zip(jsignal.istft(Z, **ikw), scipy.signal.istft(Z, **ikw)):
            _allclose(got, want, 1e-9)


def test_stft_axis_and_complex_against_scipy(x64: Any) -> None:
    x = RNG.standard_normal((30, 2)) + 1j * RNG.standard_normal((30, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got, want in zip(jsignal.stft(x, nperseg=8, axis=0),
                             scipy.signal.stft(x, nperseg=8, axis=0)):
            _allclose(got, want)
    _, _, Z = scipy.signal.stft(x[:, 0], nperseg=8, return_onesided=False)
    Zt = np.moveaxis(Z, 0, 1)
    for got, want in zip(jsignal.istft(Zt, input_onesided=False, time_axis=0, freq_axis=1),
                         scipy.signal.istft(Zt, input_onesided=False, time_axis=0,
                                            freq_axis=1)):
        _allclose(got, want, 1e-9)


_WELCH_KWARGS = [
    {"nperseg": 16},
    {"nperseg": 16, "fs": 10.0, "scaling": "spectrum", "average": "median", "detrend": False},
    {"nperseg": 9, "nfft": 10, "return_onesided": False, "window": "hamming"},
    {"nperseg": 12, "noverlap": 2, "detrend": "linear", "average": "median"},
]
# (a callable detrend is not compared: JAX hands it the segments with the wrong axis last,
# which the recorded case welch_axis0_callable_detrend pins)


@pytest.mark.parametrize("kwargs", _WELCH_KWARGS)
def test_welch_csd_against_scipy(x64: Any, kwargs: dict) -> None:
    x, y = RNG.standard_normal((2, 60)), RNG.standard_normal((2, 60))
    for got, want in zip(jsignal.welch(x, **kwargs), scipy.signal.welch(x, **kwargs)):
        _allclose(got, want)
    for got, want in zip(jsignal.welch(x.T, axis=0, **kwargs),
                         scipy.signal.welch(x.T, axis=0, **kwargs)):
        _allclose(got, want)
    for got, want in zip(jsignal.csd(x, y, **kwargs), scipy.signal.csd(x, y, **kwargs)):
        _allclose(got, want)
    for got, want in zip(jsignal.csd(x, y[:, :50], **kwargs),
                         scipy.signal.csd(x, y[:, :50], **kwargs)):
        _allclose(got, want)
    for got, want in zip(jsignal.csd(x, y[:1], **kwargs), scipy.signal.csd(x, y[:1], **kwargs)):
        _allclose(got, want)


@pytest.mark.parametrize("mode,scipy_mode", [("constant", "grid-constant"),
                                             ("nearest", "nearest"), ("wrap", "grid-wrap"),
                                             ("mirror", "mirror"), ("reflect", "reflect")])
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_against_scipy(x64: Any, mode: str, scipy_mode: str,
                                       order: int) -> None:
    img = RNG.standard_normal((4, 5, 3))
    coords = [RNG.uniform(-6, 9, 40), RNG.uniform(-6, 10, 40), RNG.uniform(-3, 5, 40)]
    want = scipy.ndimage.map_coordinates(img, coords, order=order, mode=scipy_mode, cval=1.5)
    _allclose(jndimage.map_coordinates(img, coords, order, mode=mode, cval=1.5), want)
    ints = np.arange(20, dtype=np.int64).reshape(4, 5)
    got = jndimage.map_coordinates(ints, coords[:2], order, mode=mode)
    want = scipy.ndimage.map_coordinates(ints, coords[:2], order=order, mode=scipy_mode)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_trapezoid_against_scipy(x64: Any) -> None:
    y = RNG.standard_normal((4, 7))
    x = np.sort(RNG.uniform(0, 3, 7))
    _allclose(jintegrate.trapezoid(y), scipy.integrate.trapezoid(y))
    _allclose(jintegrate.trapezoid(y, x), scipy.integrate.trapezoid(y, x))
    _allclose(jintegrate.trapezoid(y, dx=0.3, axis=0), scipy.integrate.trapezoid(y, dx=0.3,
                                                                                  axis=0))


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, -3.0])
def test_regular_grid_interpolator_against_scipy(x64: Any, method: str,
                                                 fill_value: Any) -> None:
    grid = (np.sort(RNG.uniform(0, 1, 5)), np.sort(RNG.uniform(-2, 2, 4)),
            np.linspace(0, 1, 3))
    values = RNG.standard_normal((5, 4, 3, 2))
    xi = np.stack([RNG.uniform(-0.2, 1.2, 25), RNG.uniform(-2.5, 2.5, 25),
                   RNG.uniform(0, 1, 25)], -1).reshape(5, 5, 3)
    want = scipy.interpolate.RegularGridInterpolator(
        grid, values, method=method, bounds_error=False, fill_value=fill_value)(xi)
    got = jinterp.RegularGridInterpolator(grid, values, method=method,
                                          fill_value=fill_value)(xi)
    assert got.shape == want.shape
    _allclose(got, want)


def test_vq_against_scipy(x64: Any) -> None:
    obs, book = RNG.standard_normal((20, 3)), RNG.standard_normal((5, 3))
    for o, b in ((obs, book), (obs[:, 0], book[:, 0])):
        code, dist = jvq.vq(o, b)
        want_code, want_dist = scipy.cluster.vq.vq(o, b)
        np.testing.assert_array_equal(code, want_code)
        _allclose(dist, want_dist)


@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
def test_dct_against_scipy(x64: Any, norm: Any) -> None:
    x = RNG.standard_normal((3, 4, 5, 2))
    c = x + 1j * RNG.standard_normal(x.shape)
    for axis, n in ((-1, None), (0, 5), (1, 2), (2, 5)):
        _allclose(jfft.dct(x, n=n, axis=axis, norm=norm),
                  scipy.fft.dct(x, n=n, axis=axis, norm=norm))
        _allclose(jfft.idct(c, n=n, axis=axis, norm=norm),
                  scipy.fft.idct(c, n=n, axis=axis, norm=norm))
    for s, axes in ((None, None), ((3, 6), None), (None, (0, 2)), ((2, 3, 7), (3, 1, 2)),
                    (None, (1,)), ((4,), None)):
        _allclose(jfft.dctn(x, s=s, axes=axes, norm=norm),
                  scipy.fft.dctn(x, s=s, axes=axes, norm=norm))
        _allclose(jfft.idctn(c, s=s, axes=axes, norm=norm),
                  scipy.fft.idctn(c, s=s, axes=axes, norm=norm))


def _systems(n: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A symmetric positive definite matrix, a general well-conditioned one, and a vector."""
    Q = RNG.standard_normal((n, n))
    return Q @ Q.T + n * np.eye(n), Q + n * np.eye(n), RNG.standard_normal(n)


def test_krylov_solvers_against_numpy(x64: Any) -> None:
    spd, general, b = _systems()
    c = b + 1j * RNG.standard_normal(8)
    tol = dict(rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(jsparse.cg(spd, b, tol=1e-12)[0], np.linalg.solve(spd, b), **tol)
    np.testing.assert_allclose(jsparse.cg(spd, c, tol=1e-12, M=np.diag(1 / np.diag(spd)))[0],
                               np.linalg.solve(spd, c), **tol)
    np.testing.assert_allclose(jsparse.bicgstab(general, c, tol=1e-12)[0],
                               np.linalg.solve(general, c), **tol)
    for method in ("batched", "incremental"):
        for restart in (3, 20):
            x, info = jsparse.gmres(lambda v: general @ v, b, tol=1e-12, restart=restart,
                                    solve_method=method)
            np.testing.assert_allclose(x, np.linalg.solve(general, b), **tol)
            assert int(info) == 0
        x, _ = jsparse.gmres(general, c, tol=1e-12, solve_method=method, M=np.eye(8) * 0.5)
        np.testing.assert_allclose(x, np.linalg.solve(general, c), **tol)


def test_krylov_solvers_on_pytrees(x64: Any) -> None:
    spd, _, b = _systems()

    def matvec(tree: dict) -> dict:
        y = spd @ jnp.concatenate([tree["u"], tree["v"].ravel()])
        return {"u": y[:2], "v": y[2:].reshape(3, 2)}

    tree = {"u": b[:2], "v": b[2:].reshape(3, 2)}
    want = np.linalg.solve(spd, b)
    for solve in (jsparse.cg, jsparse.bicgstab, jsparse.gmres):
        x, _ = solve(matvec, tree, tol=1e-12)
        np.testing.assert_allclose(np.concatenate([x["u"], np.ravel(x["v"])]), want,
                                   rtol=1e-8, atol=1e-8)


def test_solvers_stop_at_maxiter(x64: Any) -> None:
    spd, _, b = _systems()
    one_step = np.vdot(b, b) / np.vdot(b, spd @ b) * b
    np.testing.assert_allclose(jsparse.cg(spd, b, maxiter=1)[0], one_step, rtol=1e-12)


def test_rotation_against_scipy(x64: Any) -> None:
    quat = RNG.standard_normal((6, 4))
    r, sp = Rotation.from_quat(quat), SpRotation.from_quat(quat)
    _allclose(r.as_matrix(), sp.as_matrix())
    _allclose(r.as_rotvec(), sp.as_rotvec())
    _allclose(r.as_rotvec(degrees=True), sp.as_rotvec(degrees=True))
    _allclose(r.as_mrp(), sp.as_mrp())
    _allclose(r.magnitude(), sp.magnitude())
    _allclose(r.as_quat(canonical=True), sp.as_quat(canonical=True))
    _allclose(r.as_quat(scalar_first=True), sp.as_quat(scalar_first=True))
    for seq in ("xyz", "ZXZ", "zyx", "XYX", "yzy", "ZYX"):
        _allclose(r.as_euler(seq), sp.as_euler(seq))
        _allclose(r.as_euler(seq, degrees=True), sp.as_euler(seq, degrees=True), 1e-9)
    angles = RNG.uniform(-3, 3, (6, 3))
    for seq in ("xyz", "ZXZ", "zy", "X"):
        _allclose(Rotation.from_euler(seq, angles[:, :len(seq)]).as_matrix(),
                  SpRotation.from_euler(seq, angles[:, :len(seq)]).as_matrix())
    _allclose(Rotation.from_euler("xyz", np.array([10.0, 20, 30]), degrees=True).as_matrix(),
              SpRotation.from_euler("xyz", [10, 20, 30], degrees=True).as_matrix())
    vec = RNG.standard_normal((6, 3))
    _allclose(Rotation.from_rotvec(vec).as_matrix(), SpRotation.from_rotvec(vec).as_matrix())
    _allclose(Rotation.from_rotvec(vec * 1e-5).as_matrix(),
              SpRotation.from_rotvec(vec * 1e-5).as_matrix())
    _allclose(Rotation.from_mrp(vec).as_matrix(), SpRotation.from_mrp(vec).as_matrix())
    _allclose(Rotation.from_matrix(sp.as_matrix()).as_matrix(), sp.as_matrix())
    _allclose(r.apply(vec), sp.apply(vec))
    _allclose(r.apply(vec, inverse=True), sp.apply(vec, inverse=True))
    _allclose(r[0].apply(vec), sp[0].apply(vec))
    _allclose((r * r[::-1]).as_matrix(), (sp * sp[::-1]).as_matrix())
    _allclose(r.inv().as_matrix(), sp.inv().as_matrix())
    weights = RNG.uniform(0.5, 2, 6)
    _allclose(r.mean(weights).as_matrix(), sp.mean(weights).as_matrix(), 1e-9)
    _allclose(Rotation.concatenate([r, r[:2]]).as_matrix(),
              SpRotation.concatenate([sp, sp[:2]]).as_matrix())
    _allclose(Rotation.identity().as_matrix(), np.eye(3))


def test_slerp_against_scipy(x64: Any) -> None:
    quat = RNG.standard_normal((5, 4))
    times = np.array([0.0, 0.5, 2.0, 3.0, 4.5])
    query = np.array([0.0, 0.2, 1.0, 2.5, 4.0, 4.5])
    got = Slerp.init(times, Rotation.from_quat(quat))(query)
    want = SpSlerp(times, SpRotation.from_quat(quat))(query)
    _allclose(got.as_matrix(), want.as_matrix())
    single = Slerp.init(times, Rotation.from_quat(quat))(1.7)
    assert single.single
    _allclose(single.as_matrix(), SpSlerp(times, SpRotation.from_quat(quat))(1.7).as_matrix())


# ---------------------------------------------------------------------------------------------
# (3) derivatives, jit and vmap
# ---------------------------------------------------------------------------------------------

def _grad_cases() -> dict[str, tuple[Callable, tuple]]:
    a, b = RNG.standard_normal((5, 4)), RNG.standard_normal((2, 3))
    sig = RNG.standard_normal(16)
    img = RNG.standard_normal((4, 5))
    coords = (np.array([0.3, 1.6, 2.2, -0.4]), np.array([1.2, 3.7, 0.4, 2.6]))
    spd, general, rhs = _systems(4)
    grid = (np.linspace(0, 1, 3), np.array([0.0, 0.5, 2.0]))
    values = RNG.standard_normal((3, 3))
    points = np.array([[0.2, 0.3], [0.7, 1.2]])
    return {
        "convolve": (lambda p, q: jsignal.convolve(p, q, "same"), (a, b)),
        "correlate2d": (lambda p, q: jsignal.correlate2d(p, q, "full"), (a, b)),
        "fftconvolve": (lambda p, q: jsignal.fftconvolve(p, q, "valid"), (a, b)),
        "detrend": (lambda s: jsignal.detrend(s, bp=9), (sig[:12],)),
        "stft": (lambda s: jsignal.stft(s, nperseg=8)[2], (sig,)),
        "istft": (lambda s: jsignal.istft(jsignal.stft(s, nperseg=8)[2])[1], (sig,)),
        "welch": (lambda s: jsignal.welch(s, nperseg=8, detrend="linear")[1], (sig,)),
        "csd": (lambda s, t: jsignal.csd(s, t, nperseg=8)[1], (sig, sig[::-1])),
        "map_coordinates": (lambda i, p, q: jndimage.map_coordinates(i, [p, q], 1,
                                                                     mode="reflect"),
                            (img,) + coords),
        "trapezoid": (lambda y, x: jintegrate.trapezoid(y, x), (sig[:6], np.arange(6.0) ** 1.5)),
        "interpolator": (lambda v, x: jinterp.RegularGridInterpolator(grid, v)(x),
                         (values, points)),
        "vq": (lambda o, c: jvq.vq(o, c)[1], (a[:, :2], b.T)),
        "dctn": (lambda x: jfft.dctn(x, norm="ortho"), (a,)),
        "idct": (lambda x: jfft.idct(x, n=6, axis=0), (a,)),
        "cg": (lambda m, v: jsparse.cg(m, v, tol=1e-12)[0], (spd, rhs)),
        "bicgstab": (lambda v: jsparse.bicgstab(general, v, tol=1e-12)[0], (rhs,)),
        "gmres": (lambda v: jsparse.gmres(general, v, tol=1e-12, restart=2)[0], (rhs,)),
        "rotation_matrix": (lambda q: Rotation.from_quat(q).as_matrix(), (img[:2, :4],)),
        "rotation_rotvec": (lambda v: Rotation.from_rotvec(v).as_rotvec(), (a[:2, :3],)),
        "rotation_as_euler": (lambda q: Rotation.from_quat(q).as_euler("zxz"), (img[0, :4],)),
        "rotation_from_euler": (lambda v: Rotation.from_euler("XY", v).quat, (a[0, :2],)),
        "slerp": (lambda t: Slerp.init(np.array([0.0, 1.0, 2.0]),
                                       Rotation.from_quat(img[:3, :4]))(t).as_quat(),
                  (np.float64(1.4),)),
    }


_REV_ONLY = {"bicgstab", "gmres", "slerp", "interpolator", "rotation_as_euler",
             "rotation_from_euler"}


@pytest.mark.parametrize("name", list(_grad_cases()))
def test_derivatives_numerically(x64: Any, name: str) -> None:
    fn, args = _grad_cases()[name]
    # the solvers' and interpolations' long programs: second order in reverse mode only
    modes = ("rev",) if name in _REV_ONLY else ("fwd", "rev")
    check_grads(fn, args, order=2, modes=modes, atol=1e-5, rtol=1e-5)


def _batch_cases() -> dict[str, tuple[Callable, np.ndarray]]:
    spd, _, _ = _systems(4)
    return {
        "convolve": (lambda x: jsignal.convolve(x, np.array([1.0, -0.5, 2.0])), (3, 9)),
        "welch": (lambda x: jsignal.welch(x, nperseg=8)[1], (3, 24)),
        "istft": (lambda x: jsignal.istft(jsignal.stft(x, nperseg=8)[2])[1], (3, 24)),
        "map_coordinates": (lambda x: jndimage.map_coordinates(
            np.arange(12.0).reshape(3, 4), [x[:3], x[3:]], 1, mode="wrap"), (3, 6)),
        "dct": (lambda x: jfft.dctn(x.reshape(2, 3)), (4, 6)),
        "vq": (lambda x: jvq.vq(x.reshape(3, 2), np.eye(2))[0], (4, 6)),
        "cg": (lambda x: jsparse.cg(spd, x)[0], (3, 4)),
        "gmres": (lambda x: jsparse.gmres(lambda v: spd @ v, x, solve_method="incremental")[0],
                  (2, 4)),
        "rotation": (lambda x: Rotation.from_quat(x).apply(np.ones(3)), (5, 4)),
    }


@pytest.mark.parametrize("name", list(_batch_cases()))
def test_vmap_and_jit_equal_loop(name: str) -> None:
    fn, shape = _batch_cases()[name]
    xs = RNG.standard_normal(shape).astype(np.float32)
    loop = np.stack([np.asarray(fn(x)) for x in xs])
    np.testing.assert_allclose(pyjax.vmap(fn)(xs), loop, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(pyjax.jit(fn)(xs[0]), loop[0], rtol=2e-5, atol=2e-5)


def test_interpolator_and_rotations_are_pytrees() -> None:
    f = jinterp.RegularGridInterpolator((np.arange(3.0),), np.array([0.0, 1.0, 4.0]))
    leaves, treedef = pyjax.tree_util.tree_flatten(f)
    assert len(leaves) == 3
    g = pyjax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(g, jinterp.RegularGridInterpolator) and g.method == "linear"
    np.testing.assert_allclose(pyjax.jit(lambda h, x: h(x))(f, np.array([1.5])), [2.5])
    s = Slerp.init(np.array([0.0, 1.0]), Rotation.from_euler("z", np.array([[0.0], [1.0]])))
    assert len(pyjax.tree_util.tree_leaves(s)) == 4
    out = pyjax.jit(lambda sl, t: sl(t))(s, np.float32(0.5))
    assert isinstance(out, Rotation)
    np.testing.assert_allclose(out.magnitude(), 0.5, rtol=1e-6)
