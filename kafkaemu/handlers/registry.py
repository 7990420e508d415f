"""Which handler answers which API: handlers register (``ApiKey``, min, max version) with
``@registry.register``; the broker's dispatch looks them up here, and ApiVersions is derived from it,
so an API is advertised exactly when a handler for it is registered."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..broker.context import Handler
from ..protocol.api_keys import ApiKey


@dataclass(frozen=True)
class ApiHandler:
    api_key: ApiKey
    name: str
    min_version: int
    max_version: int
    func: Handler

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


class ApiRegistry:
    def __init__(self) -> None:
        self._apis: dict[int, ApiHandler] = {}   # keyed by plain ints: looked up with the header's key
        self._api_keys: list[dict] | None = None

    def register(self, api_key: ApiKey, min_version: int, max_version: int) -> Callable[[Handler], Handler]:
        api_key = ApiKey(api_key)

        def decorate(func: Handler) -> Handler:
            if api_key in self._apis:
                raise ValueError(f"api key {api_key} registered twice ({self._apis[api_key].name}, {func.__name__})")
            if min_version > max_version:
                raise ValueError(f"api key {api_key}: empty version range")
            self._api_keys = None
            name = func.__module__.rsplit(".", 1)[-1]
            self._apis[int(api_key)] = ApiHandler(api_key, name, min_version, max_version, func)
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


registry = ApiRegistry()
REGISTRY = registry
