"""`jax._src.dispatch`: pyjax runs every effect synchronously, in program order, so there is
never an outstanding effect token to wait for."""


def wait_for_tokens() -> None:
    """Block until all effects issued so far have happened: they already have."""
