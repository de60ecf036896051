"""pyjax.sharding: meshes, partition specs and shardings (re-exports only)."""
from pyjax._src.parallel.mesh import (  # noqa: F401
    AbstractDevice, AbstractMesh, AxisType, Mesh, get_abstract_mesh, get_mesh, set_mesh,
    use_abstract_mesh)
from pyjax._src.core.avals import ManualAxisType  # noqa: F401
from pyjax._src.parallel.reshard import auto_axes, explicit_axes, reshard  # noqa: F401
from pyjax._src.parallel.sharding import (  # noqa: F401
    NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, make_single_device_sharding)
