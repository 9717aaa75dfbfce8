"""SSH switch simulator: EOS and SONiC devices that netmiko drives over real SSH.

One asyncio event loop serves many simulated switches, each on its own
loopback port, for plumb's tests (in-process, `SwitchSim`) and benchmarks
(``python -m tests.switchsim serve``).  Devices keep running and startup
configuration in a JSON file per device, support EOS configuration sessions
with commit timers and SONiC config_db JSON patches with checkpoints, and
inject deterministic faults (`Fault`).
"""

from .model import BgpNeighbor, BgpState, EcnQueue, InterfaceState, SwitchState, default_state
from .sim import SwitchSim
from .spec import DeviceSpec, Fault

__all__ = [
    "BgpNeighbor",
    "BgpState",
    "DeviceSpec",
    "EcnQueue",
    "Fault",
    "InterfaceState",
    "SwitchSim",
    "SwitchState",
    "default_state",
]
