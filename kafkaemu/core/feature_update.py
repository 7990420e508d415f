"""One feature of an UpdateFeatures request, as ``FinalizedFeatures.update`` (``features.py``)
checks and applies it. Its own module so that a start, which never updates features, does not
make the class (a frozen dataclass: about 0.5 ms); UpdateFeatures' handler imports it."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FeatureUpdate:
    """One feature of an UpdateFeatures request: its name, the level asked for and the upgrade type
    (``features.UPGRADE``, ``SAFE_DOWNGRADE`` or ``UNSAFE_DOWNGRADE``)."""
    name: str
    level: int
    upgrade_type: int
