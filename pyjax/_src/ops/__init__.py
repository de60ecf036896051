"""Operations shared between public modules (JAX's jax/_src/ops): logsumexp."""
