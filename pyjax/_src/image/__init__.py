"""Image resampling (JAX's jax/_src/image): `jax.image.resize` and `scale_and_translate`."""
