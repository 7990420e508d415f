"""KIP-714 client telemetry without a client: the CLIENT_METRICS subscriptions and, per client
instance that pushed, its identity and the latest value of every metric it reported."""
from __future__ import annotations

from ..params import text
from ..table import Cli, P, Py, op
from .base import ControlBase


class TelemetryOps(ControlBase):
    @op("GET", "/api/telemetry", client_id=P(text, help="only the instances of this client id"),
        py=Py("telemetry", lambda client_id=None: {"client_id": client_id}),
        cli=Cli("telemetry"))
    def telemetry(self, client_id) -> dict:
        """The CLIENT_METRICS subscriptions and the metrics each client instance pushed (the latest
        value per metric and attribute set; delta sums also as their running total)."""
        metrics = self.broker.client_metrics
        clients = [c for c in metrics.clients() if client_id is None or c["client_id"] == client_id]
        return {"subscriptions": [{"name": n, "configs": dict(metrics.configs[n])} for n in metrics.names()],
                "clients": clients}
