"""jax.random: PRNG keys (raw uint32 and typed `key<fry>`) and the samplers built on them."""
