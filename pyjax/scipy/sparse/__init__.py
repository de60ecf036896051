"""pyjax.scipy.sparse: the linalg submodule."""
from pyjax.scipy.sparse import linalg as linalg  # noqa: F401
