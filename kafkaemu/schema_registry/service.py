"""Serving the registry: an aiohttp server on the broker's loop, on its own port, its schema work
in a process of its own (worker.py), every request checked as the control API's are (http_guard)."""
from __future__ import annotations

from ..logging import get_logger
from aiohttp import web

from ..http_guard import Guard, listens_remotely
from .http import BODY_TYPES, RegistryApi
from .registry import SchemaRegistry
from .worker import SchemaWorker

log = get_logger("kafkaemu.schema_registry")

# Largest request body: a schema larger than a record the broker takes could not be stored anyway.
EXTRA_BODY_BYTES = 64 * 1024


class SchemaRegistryServer:
    def __init__(self, broker, clock, config) -> None:
        self.registry = SchemaRegistry(broker.store, clock)
        self.host = config.schema_registry_host
        self.requested_port = config.schema_registry_port
        self.max_body = config.message_max_bytes + EXTRA_BODY_BYTES
        self.guard = Guard("the schema registry", allow_remote=listens_remotely(self.host),
                           names=(self.host, config.advertised_host), body_types=BODY_TYPES)
        self.worker: SchemaWorker | None = None
        self.port: int | None = None
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        self.worker = SchemaWorker()
        api = RegistryApi(self.registry, self.worker, self.guard)
        self._runner = web.AppRunner(api.application(self.max_body), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.requested_port, reuse_address=True)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        self.registry.sync()
        log.info("schema_registry_listening", url=self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.worker is not None:
            await self.worker.close()
            self.worker = None
