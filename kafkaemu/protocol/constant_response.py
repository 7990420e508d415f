"""A response answered again and again without change, its encoding kept per version."""
from __future__ import annotations


class ConstantResponse(dict):
    """A response a handler answers again and again without change (ApiVersions, an OffsetCommit
    whose partitions all succeed): the connection encodes it once per version and reuses the
    bytes. Never mutate one; wrappers (faults, version caps) build new dicts from it. Here, below
    the broker, so the group coordinator may answer one."""

    __slots__ = ("encoded",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.encoded: dict[int, bytes] = {}
