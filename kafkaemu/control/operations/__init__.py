"""Every test control, implemented once, grouped by concern (one module each); the HTTP API
(control/http.py), ``KafkaEmulator`` (control/python_api.py) and ``kafkaemu ctl`` (control/cli.py)
are derived from the table their ``@op`` declarations fill (control/table.py).

Results are JSON values. A refused call raises ControlError with its HTTP status; nothing is
changed by a call that is refused. Operations run on the broker's loop.
"""
from __future__ import annotations

from ..table import OPS, Op, op
from .awaits import GROUP_STATES, MAX_AWAIT_MS, AwaitOps
from .clock import ClockOps
from .faults import FaultOps
from .groups import GroupOps
from .nodes import NodeOps
from .quotas import QuotaOps
from .records import RecordOps
from .overview import OverviewOps
from .requests import RequestOps
from .schemas import SchemaRegistryOps
from .security import SecurityOps
from .share import ShareOps
from .telemetry import TelemetryOps
from .snapshots import SnapshotOps
from .topics import TopicOps
from .transactions import TransactionOps


class Control(OverviewOps, ClockOps, GroupOps, FaultOps, NodeOps, TopicOps, RecordOps, TransactionOps, RequestOps,
              AwaitOps, SnapshotOps, SchemaRegistryOps, SecurityOps, ShareOps, QuotaOps, TelemetryOps):
    """The control plane of one broker: ``run(name, params)`` / ``await call(name, params)``."""


__all__ = ["Control", "GROUP_STATES", "MAX_AWAIT_MS", "OPS", "Op", "op"]
