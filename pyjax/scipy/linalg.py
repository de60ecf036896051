"""pyjax.scipy.linalg: SciPy's linear algebra on pyjax arrays (re-exports only)."""
from pyjax._src.scipy.eigh_tridiagonal import eigh_tridiagonal  # noqa: F401
from pyjax._src.scipy.linalg import (  # noqa: F401
    cho_factor, cho_solve, cholesky, det, eigh, hessenberg, inv, lu, lu_factor, lu_solve, qr,
    qr_multiply, rsf2csf, schur, solve, solve_sylvester, solve_triangular, svd)
from pyjax._src.scipy.matrix_functions import (  # noqa: F401
    expm, expm_frechet, funm, polar, sqrtm)
from pyjax._src.scipy.special_matrices import (  # noqa: F401
    block_diag, circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion,
    hadamard, hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal, toeplitz)
