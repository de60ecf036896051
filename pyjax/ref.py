"""`jax.ref`: mutable array references (re-exports)."""
from pyjax._src.state import AbstractRef, Ref, freeze, new_ref  # noqa: F401
from pyjax._src.state.ops import ref_addupdate as addupdate  # noqa: F401
from pyjax._src.state.ops import ref_get as get  # noqa: F401
from pyjax._src.state.ops import ref_set as set  # noqa: F401,A001
from pyjax._src.state.ops import ref_swap as swap  # noqa: F401
