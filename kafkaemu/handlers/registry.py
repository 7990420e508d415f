"""The dispatch registry: handlers register (api key, min, max version); ApiVersions is derived
from it, so an API is advertised exactly when a handler for it is registered."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..broker import Broker

DEFERRED = object()     # the handler keeps ctx.respond and calls it later (parked replies)
NO_RESPONSE = object()  # nothing is sent back (acks=0 produce)

Response = dict


class ConstantResponse(dict):
    """A response a handler answers again and again without change (ApiVersions): the connection
    encodes it once per version and reuses the bytes. Never mutate one; wrappers (faults, version
    caps) build new dicts from it."""

    __slots__ = ("encoded",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.encoded: dict[int, bytes] = {}


@dataclass(slots=True)
class RequestContext:
    """What a handler knows about the request besides its body."""

    broker: "Broker"
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    connection_id: int
    now_ms: int
    node_id: int = 0
    respond: Callable[[Response], None] = field(default=lambda resp: None, repr=False)


Handler = Callable[[RequestContext, Any], Any]


@dataclass(frozen=True)
class ApiHandler:
    api_key: int
    name: str
    min_version: int
    max_version: int
    func: Handler

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


class ApiRegistry:
    def __init__(self) -> None:
        self._apis: dict[int, ApiHandler] = {}
        self._api_keys: list[dict] | None = None

    def register(self, api_key: int, min_version: int, max_version: int) -> Callable[[Handler], Handler]:
        def decorate(func: Handler) -> Handler:
            if api_key in self._apis:
                raise ValueError(f"api key {api_key} registered twice ({self._apis[api_key].name}, {func.__name__})")
            if min_version > max_version:
                raise ValueError(f"api key {api_key}: empty version range")
            self._api_keys = None
            self._apis[api_key] = ApiHandler(api_key, func.__module__.rsplit(".", 1)[-1], min_version, max_version, func)
            return func
        return decorate

    def get(self, api_key: int) -> ApiHandler | None:
        return self._apis.get(api_key)

    def supports(self, api_key: int, version: int) -> bool:
        api = self._apis.get(api_key)
        return api is not None and api.supports(version)

    @property
    def count(self) -> int:
        """How many APIs are registered."""
        return len(self._apis)

    def versions(self) -> list[tuple[int, int, int]]:
        """(api_key, min_version, max_version) for every registered API, sorted by key."""
        return [(a.api_key, a.min_version, a.max_version) for a in sorted(self._apis.values(), key=lambda a: a.api_key)]

    def api_keys(self) -> list[dict]:
        """The ``api_keys`` list of an ApiVersions response (a new list; its entries are shared)."""
        if self._api_keys is None:
            self._api_keys = [{"api_key": k, "min_version": lo, "max_version": hi} for k, lo, hi in self.versions()]
        return list(self._api_keys)


REGISTRY = ApiRegistry()
handler = REGISTRY.register
