"""pyjax.random: JAX's PRNG keys and samplers (re-exports only)."""
from pyjax._src.random.base import (  # noqa: F401
    PRNGKey, PRNGSpec, bits, clone, default_prng_impl, fold_in, key, key_data, key_dtype,
    key_impl, resolve_prng_impl, split, wrap_key_data)
from pyjax._src.random.continuous import (  # noqa: F401
    cauchy, double_sided_maxwell, exponential, gumbel, laplace, logistic, lognormal, maxwell,
    multivariate_normal, normal, pareto, rayleigh, triangular, truncated_normal, uniform, wald,
    weibull_min)
from pyjax._src.random.discrete import (  # noqa: F401
    bernoulli, categorical, choice, geometric, permutation, rademacher, randint)
from pyjax._src.random.extra_samplers import binomial, multinomial, orthogonal  # noqa: F401
from pyjax._src.random.gamma import (  # noqa: F401
    ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, random_gamma_p, t)
from pyjax._src.random.keys import PRNGImpl, PRNGKeyArray  # noqa: F401
from pyjax._src.random.poisson import poisson  # noqa: F401
