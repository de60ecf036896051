"""`jax.scipy.special`: SciPy's special functions on pyjax arrays (re-exports only)."""
from pyjax._src.scipy.special import (  # noqa: F401
    bernoulli, beta, betainc, betaln, boxcox, boxcox1p, comb, digamma, entr, erf, erfc, erfinv,
    expit, factorial, gamma, gammainc, gammaincc, gammaln, gammasgn, i0, i0e, i1, i1e, kl_div,
    log_ndtr, log_softmax, loggamma, logit, logsumexp, multigammaln, ndtr, ndtri, poch,
    polygamma, rel_entr, softmax, xlog1py, xlogy, zeta)
from pyjax._src.scipy.special_erf import dawsn, erfcx, fresnel, owens_t, wofz  # noqa: F401
from pyjax._src.scipy.special_expint import exp1, expi, expn, sici, spence  # noqa: F401
from pyjax._src.scipy.special_hyp import hyp1f1, hyp2f1  # noqa: F401
from pyjax._src.scipy.special_legendre import bessel_jn, sph_harm_y  # noqa: F401
