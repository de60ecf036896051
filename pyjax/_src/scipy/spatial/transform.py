"""jax.scipy.spatial.transform: Rotation (unit quaternions, scalar last) and Slerp, as
NamedTuples so they are pytrees that pass through jit, vmap and grad. Each conversion is
written for one quaternion and vectorized over leading axes with jnp.vectorize."""
from __future__ import annotations

import functools
import re
import typing
from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax._src import config


def _vectorized(signature: str) -> Any:
    return functools.partial(jnp.vectorize, signature=signature)


def _check_seq(seq: str, count_ok: bool, count_error: str) -> tuple[bool, bool]:
    """(intrinsic, extrinsic) of an axis sequence such as 'xyz' or 'ZXZ'."""
    if not count_ok:
        raise ValueError(count_error)
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic, extrinsic


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, stored as quaternions (x, y, z, w); a leading axis holds
    several."""
    quat: Any

    @classmethod
    def concatenate(cls, rotations: typing.Sequence) -> "Rotation":
        """One Rotation holding all of `rotations` in order."""
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> "Rotation":
        """From Euler angles about the axes of seq (lower case: extrinsic, upper: intrinsic)."""
        num_axes = len(seq)
        intrinsic, _ = _check_seq(
            seq, 1 <= num_axes <= 3,
            "Expected axis specification to be a non-empty string of upto 3 characters, "
            f"got {seq}")
        angles = jnp.atleast_1d(angles)
        axes = jnp.array([_elementary_basis_index(x) for x in seq.lower()])
        return cls(_elementary_quat_compose(angles, axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> "Rotation":
        """From rotation matrices (..., 3, 3)."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> "Rotation":
        """From modified Rodrigues parameters (..., 3)."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any) -> "Rotation":
        """From quaternions (..., 4), scalar last; they are normalized."""
        return cls(_normalize_quaternion(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> "Rotation":
        """From rotation vectors (axis times angle) (..., 3)."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> "Rotation":
        """The identity rotation (a single one: num must be None)."""
        assert num is None
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> "Rotation":
        """Not provided by JAX 0.10.2 either (it raises NotImplementedError)."""
        raise NotImplementedError()

    def __getitem__(self, indexer: Any) -> "Rotation":
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: "Rotation") -> "Rotation":  # type: ignore[override]
        """The composition: self applied after other."""
        return Rotation.from_quat(_compose_quat(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """The rotated vectors (..., 3) (by the inverse rotation when inverse)."""
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles about the three axes of seq."""
        _, extrinsic = _check_seq(seq, len(seq) == 3, f"Expected 3 axes, got {seq}.")
        axes = jnp.array([_elementary_basis_index(x) for x in seq.lower()])
        with config.numpy_rank_promotion("allow"):
            return _compute_euler_from_quat(self.quat, axes, extrinsic, degrees)

    def as_matrix(self) -> Any:
        """Rotation matrices (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Any:
        """Modified Rodrigues parameters (..., 3)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors (..., 3)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; canonical picks the sign with w >= 0 (first nonzero positive)."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        if scalar_first:
            return jnp.roll(quat, shift=1, axis=-1)
        return quat

    def inv(self) -> "Rotation":
        """The inverse rotations."""
        return Rotation(_inv(self.quat))

    def magnitude(self) -> Any:
        """The rotation angles in radians, in [0, pi]."""
        return _magnitude(self.quat)

    def mean(self, weights: Any | None = None) -> "Rotation":
        """The (weighted) mean rotation: the top eigenvector of sum w q q^T."""
        w = (jnp.ones(self.quat.shape[0], dtype=self.quat.dtype) if weights is None
             else jnp.asarray(weights, dtype=self.quat.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of "
                             f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        K = jnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, v = jnp.linalg.eigh(K)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (no leading axis)."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between rotations at increasing key times."""
    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> "Slerp":
        """The interpolator through `rotations` (at least 2) at `times` (1-D)."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        timedelta = jnp.diff(times)
        new_rotations = Rotation(rotations.as_quat()[:-1])
        return cls(times=times, timedelta=timedelta, rotations=new_rotations,
                   rotvecs=(new_rotations.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotations at `times` (a scalar gives a single rotation)."""
        compute_times = jnp.asarray(times, dtype=self.times.dtype)
        if compute_times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single_time = compute_times.ndim == 0
        compute_times = jnp.atleast_1d(compute_times)
        ind = jnp.maximum(jnp.searchsorted(self.times, compute_times) - 1, 0)
        alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        if single_time:
            return result[0]
        return result


@_vectorized("(m,m),(m),()->(m)")
def _apply(matrix: Any, vector: Any, inverse: bool) -> Any:
    return jnp.where(inverse, matrix.T, matrix) @ vector


@_vectorized("(m)->(n,n)")
def _as_matrix(quat: Any) -> Any:
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return jnp.array([[+x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                      [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
                      [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]])


@_vectorized("(m)->(n)")
def _as_mrp(quat: Any) -> Any:
    sign = jnp.where(quat[3] < 0, -1.0, 1.0)
    denominator = 1.0 + sign * quat[3]
    return sign * quat[:3] / denominator


@_vectorized("(m),()->(n)")
def _as_rotvec(quat: Any, degrees: bool) -> Any:
    quat = jnp.where(quat[3] < 0, -quat, quat)  # w >= 0: angle in [0, pi]
    angle = 2.0 * jnp.arctan2(_vector_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880  # Taylor series near 0
    large_scale = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= 1e-3, small_scale, large_scale)
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale * jnp.array(quat[:3])


@_vectorized("(n),(n)->(n)")
def _compose_quat(p: Any, q: Any) -> Any:
    cross = jnp.cross(p[:3], q[:3])
    return jnp.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                      p[3] * q[1] + q[3] * p[1] + cross[1],
                      p[3] * q[2] + q[3] * p[2] + cross[2],
                      p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@_vectorized("(m),(l),(),()->(n)")
def _compute_euler_from_quat(quat: Any, axes: Any, extrinsic: bool, degrees: bool) -> Any:
    """Euler angles of a quaternion (Bernardes & Viollet's direct method, as SciPy)."""
    angle_first = jnp.where(extrinsic, 0, 2)
    angle_third = jnp.where(extrinsic, 2, 0)
    axes = jnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = jnp.where(symmetric, 3 - i - j, k)
    sign = jnp.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    eps = 1e-7
    a = jnp.where(symmetric, quat[3], quat[3] - quat[j])
    b = jnp.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = jnp.where(symmetric, quat[j], quat[j] + quat[3])
    d = jnp.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = jnp.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b)))
    # case 1: the middle angle is 0; case 2: it is pi (gimbal lock either way)
    case = jnp.where(jnp.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(angles[1]) <= eps, 1, case)
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    angles = angles.at[0].set(jnp.where(case == 1, 2 * half_sum,
                                        2 * half_diff * jnp.where(extrinsic, -1, 1)))
    angles = angles.at[angle_first].set(jnp.where(case == 0, half_sum - half_diff,
                                                  angles[angle_first]))
    angles = angles.at[angle_third].set(jnp.where(case == 0, half_sum + half_diff,
                                                  angles[angle_third]))
    angles = angles.at[angle_third].set(jnp.where(symmetric, angles[angle_third],
                                                  angles[angle_third] * sign))
    angles = angles.at[1].set(jnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(angles), angles)


def _elementary_basis_index(axis: str) -> int:
    if axis == "x":
        return 0
    if axis == "y":
        return 1
    if axis == "z":
        return 2
    raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}")


@_vectorized("(m),(m),(),()->(n)")
def _elementary_quat_compose(angles: Any, axes: Any, intrinsic: bool, degrees: bool) -> Any:
    angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
    result = _make_elementary_quat(axes[0], angles[0])
    for idx in range(1, len(axes)):
        quat = _make_elementary_quat(axes[idx], angles[idx])
        result = jnp.where(intrinsic, _compose_quat(result, quat), _compose_quat(quat, result))
    return result


@_vectorized("(m),()->(n)")
def _from_rotvec(rotvec: Any, degrees: bool) -> Any:
    rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _vector_norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840  # Taylor series near 0
    large_scale = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= 1e-3, small_scale, large_scale)
    return jnp.hstack([scale * rotvec, jnp.cos(angle / 2)])


@_vectorized("(m,m)->(n)")
def _from_matrix(matrix: Any) -> Any:
    """The quaternion of a rotation matrix, from its largest diagonal entry or its trace
    (whichever is largest, for accuracy)."""
    matrix_trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    decision = jnp.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], matrix_trace],
                         dtype=matrix.dtype)
    choice = jnp.argmax(decision)
    i = choice
    j = (i + 1) % 3
    k = (j + 1) % 3
    quat_012 = jnp.empty(4, dtype=matrix.dtype)
    quat_012 = quat_012.at[i].set(1 - decision[3] + 2 * matrix[i, i])
    quat_012 = quat_012.at[j].set(matrix[j, i] + matrix[i, j])
    quat_012 = quat_012.at[k].set(matrix[k, i] + matrix[i, k])
    quat_012 = quat_012.at[3].set(matrix[k, j] - matrix[j, k])
    quat_3 = jnp.empty(4, dtype=matrix.dtype)
    quat_3 = quat_3.at[0].set(matrix[2, 1] - matrix[1, 2])
    quat_3 = quat_3.at[1].set(matrix[0, 2] - matrix[2, 0])
    quat_3 = quat_3.at[2].set(matrix[1, 0] - matrix[0, 1])
    quat_3 = quat_3.at[3].set(1 + decision[3])
    quat = jnp.where(choice != 3, quat_012, quat_3)
    return _normalize_quaternion(quat)


@_vectorized("(m)->(n)")
def _from_mrp(mrp: Any) -> Any:
    mrp_squared_plus_1 = jnp.dot(mrp, mrp) + 1
    return jnp.hstack([2 * mrp[:3], 2 - mrp_squared_plus_1]) / mrp_squared_plus_1


@_vectorized("(n)->(n)")
def _inv(quat: Any) -> Any:
    return quat * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)


@_vectorized("(n)->()")
def _magnitude(quat: Any) -> Any:
    return 2.0 * jnp.arctan2(_vector_norm(quat[:3]), jnp.abs(quat[3]))


@_vectorized("(),()->(n)")
def _make_elementary_quat(axis: int, angle: Any) -> Any:
    quat = jnp.zeros(4, dtype=angle.dtype)
    quat = quat.at[3].set(jnp.cos(angle / 2.0))
    return quat.at[axis].set(jnp.sin(angle / 2.0))


@_vectorized("(n)->(n)")
def _normalize_quaternion(quat: Any) -> Any:
    return quat / _vector_norm(quat)


@_vectorized("(n)->()")
def _vector_norm(vector: Any) -> Any:
    return jnp.sqrt(jnp.dot(vector, vector))


@_vectorized("(n)->(n)")
def _make_canonical(quat: Any) -> Any:
    is_neg = quat < 0
    is_zero = quat == 0
    neg = (is_neg[3] | (is_zero[3] & is_neg[0]) | (is_zero[3] & is_zero[0] & is_neg[1])
           | (is_zero[3] & is_zero[0] & is_zero[1] & is_neg[2]))
    return jnp.where(neg, -quat, quat)
