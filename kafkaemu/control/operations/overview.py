"""What a dashboard or a newcomer asks first: every operation, and everything at once."""
from __future__ import annotations

from ..params import boolean
from ..table import OPS, Cli, P, op
from .base import ControlBase


class OverviewOps(ControlBase):
    @op("GET", "/api", cli=Cli("routes"))
    def routes(self) -> dict:
        """Every operation with its route and parameters."""
        return {"routes": [o.describe() for o in OPS.values()]}

    @op("GET", "/api/state", internal=P(boolean, default=False, help="include __consumer_offsets"), cli=Cli("state"))
    def state(self, internal: bool) -> dict:
        """Everything at once (what a dashboard polls): clock, nodes, topics, groups, faults,
        version caps, request log status, snapshots and the journal's next sequence number."""
        return {"clock": self.clock_get(), "nodes": self.nodes()["nodes"],
                "topics": self.topics(internal)["topics"], "groups": self.groups()["groups"],
                "faults": self.faults()["faults"], "api_version_caps": self.api_version_caps()["caps"],
                "request_log": self.broker.interceptor.log.status(), "snapshots": self.snapshot_list()["snapshots"],
                "journal_next_seq": self.journal_next_seq}
