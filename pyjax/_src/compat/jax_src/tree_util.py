"""`jax._src.tree_util`: pyjax's pytree machinery; `_registry` holds the registered node
types (libraries test `type(x) in _registry`)."""
from pyjax._src.tree_util import *  # noqa: F401,F403
from pyjax._src.tree_util import _kinds as _registry  # noqa: F401
from pyjax._src.tree_util import flatten_one_level  # noqa: F401
