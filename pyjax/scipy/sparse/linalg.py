"""pyjax.scipy.sparse.linalg: the Krylov solvers cg, gmres and bicgstab (re-exports)."""
from pyjax._src.scipy.sparse.linalg import bicgstab, cg, gmres  # noqa: F401
