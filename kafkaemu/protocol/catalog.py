"""The catalogue of every message kafkaemu speaks, loaded once from ``protocol_specs/``."""
from __future__ import annotations

import os
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from .codegen import Codec
from .spec import MessageSpec, load_spec_dir


def spec_dir() -> Path:
    """``KAFKAEMU_PROTOCOL_SPECS`` if set; else the specs an installed kafkaemu carries
    (``kafkaemu/protocol_specs``, package data of the wheel); else a checkout's top-level
    ``protocol_specs/`` (running from source or installed editable)."""
    env = os.environ.get("KAFKAEMU_PROTOCOL_SPECS")
    if env:
        return Path(env)
    shipped = files("kafkaemu") / "protocol_specs"
    if shipped.is_dir():
        return Path(str(shipped))
    checkout = Path(__file__).resolve().parents[2] / "protocol_specs"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"protocol_specs/ is neither in the package ({shipped}) nor in a checkout "
                            f"({checkout}); set KAFKAEMU_PROTOCOL_SPECS")


class Catalog:
    def __init__(self, messages: list[MessageSpec]):
        self.requests: dict[int, MessageSpec] = {}
        self.responses: dict[int, MessageSpec] = {}
        self.others: dict[str, MessageSpec] = {}
        for m in messages:
            table = {"request": self.requests, "response": self.responses}.get(m.kind)
            if table is None:
                if m.name in self.others:
                    raise ValueError(f"duplicate message {m.name}")
                self.others[m.name] = m
            else:
                if m.api_key in table:
                    raise ValueError(f"duplicate {m.kind} for api key {m.api_key}")
                table[m.api_key] = m
        self._codecs: dict[tuple[str, int], Codec] = {}

    def _codec(self, spec: MessageSpec, version: int) -> Codec:
        key = (spec.name, version)
        codec = self._codecs.get(key)
        if codec is None:
            if version not in spec.versions:
                raise KeyError(f"{spec.name} has no version {version}")
            codec = self._codecs[key] = Codec(spec, version)
        return codec

    def request(self, api_key: int, version: int) -> Codec:
        return self._codec(self.requests[api_key], version)

    def response(self, api_key: int, version: int) -> Codec:
        return self._codec(self.responses[api_key], version)

    def data(self, name: str, version: int) -> Codec:
        return self._codec(self.others[name], version)

    def is_flexible_request(self, api_key: int, version: int) -> bool:
        return version in self.requests[api_key].flexible

    def api_name(self, api_key: int) -> str:
        spec = self.requests.get(api_key)
        return spec.name[: -len("Request")] if spec else f"Api{api_key}"


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    return Catalog(load_spec_dir(spec_dir()))
