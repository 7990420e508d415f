"""The cluster's feature flags (KIP-584) as a Kafka 4.4 cluster finalizes them, and their updates.

A new 4.4 cluster (``kafka-storage format --standalone``) finalizes metadata.version 4.4-IV2
(level 33), kraft.version 1, transaction.version 2, group.version 1,
eligible.leader.replicas.version 1, share.version 2 and streams.version 1 (StreamsVersion SV_1):
streams groups (KIP-1071) are on; a test finalizing streams.version 0 turns them off.

``FinalizedFeatures.update`` validates as Kafka's FeatureControlManager.updateFeature and applies
the whole request or nothing (QuorumController.updateFeatures); each applied request moves the
finalized features' epoch on, which clients compare to pick the newest answer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .feature_update import FeatureUpdate

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELR_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

# name -> (supported min, supported max, a new 4.4 cluster's finalized level), as a Kafka 4.4.0 broker answers
KAFKA_4_4 = {
    METADATA_VERSION: (7, 33, 33),     # 3.3-IV3 .. 4.4-IV2 (MetadataVersion.LATEST_PRODUCTION)
    KRAFT_VERSION: (0, 1, 1),
    TRANSACTION_VERSION: (0, 2, 2),
    GROUP_VERSION: (0, 1, 1),
    ELR_VERSION: (0, 1, 1),
    SHARE_VERSION: (0, 2, 2),
    STREAMS_VERSION: (0, 1, 1),
}
# FeatureUpdate.UpgradeType
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
INVALID_UPDATE_VERSION = 95   # Errors.INVALID_UPDATE_VERSION


def parse_levels(items) -> dict[str, int]:
    """``NAME=LEVEL`` items (the ``--feature`` setting) as levels; ValueError naming the first bad one."""
    levels = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"takes NAME=LEVEL, got {item!r}")
        if name not in KAFKA_4_4:
            raise ValueError(f"unknown feature {name!r}; kafkaemu has {', '.join(sorted(KAFKA_4_4))}")
        try:
            level = int(text)
        except ValueError:
            raise ValueError(f"{name} takes an integer level, got {text.strip()!r}") from None
        low, high, _ = KAFKA_4_4[name]
        if not low <= level <= high:
            raise ValueError(f"{name} supports levels {low}-{high}, got {level}")
        levels[name] = level
    return levels


class FinalizedFeatures:
    """The finalized level of each feature, its epoch, and the update rules. ``supported`` may
    narrow Kafka 4.4's ranges to what the broker answers (``supported_ranges``)."""

    def __init__(self, levels: dict[str, int] | None = None, controller_id: int = 0) -> None:
        self.levels = {name: default for name, (_, _, default) in KAFKA_4_4.items()}
        self.levels.update(levels or {})
        self.controller_id = controller_id
        self.epoch = 1
        self.answers: dict = {}   # what ApiVersions made of this state; emptied on each change

    def level(self, name: str) -> int:
        """A feature's finalized level; 0 when it is not finalized (as Kafka reads a missing one)."""
        return self.levels.get(name, 0)

    def finalized(self, supported: dict[str, tuple[int, int]]) -> dict[str, int]:
        """The levels a client sees: within what the broker supports, those above 0 (Kafka drops a
        feature finalized at 0; kraft.version is listed only above 0 too)."""
        out = {}
        for name, level in self.levels.items():
            if name in supported:
                level = min(level, supported[name][1])
                if level > 0:
                    out[name] = level
        return out

    def update(self, updates: list[FeatureUpdate], supported: dict[str, tuple[int, int]],
               validate_only: bool) -> str | None:
        """Apply every update or none: None when done, else Kafka's message of the first refused one
        (its error is INVALID_UPDATE_VERSION)."""
        current = self.finalized(supported)
        for u in updates:
            reason = self._refusal(u, current.get(u.name, 0), supported)
            if reason is not None:
                return reason
        if not validate_only and updates:
            for u in updates:
                self.levels[u.name] = u.level
            self.epoch += 1
            self.answers.clear()
        return None

    def _refusal(self, u: FeatureUpdate, current: int, supported) -> str | None:
        """FeatureControlManager.updateFeature's checks, in its order."""
        if u.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return _invalid(u, "The controller does not support the given upgrade type.")
        if u.level < 0:
            return _invalid(u, "A feature version cannot be less than 0.")
        if u.name not in supported:
            if u.level == 0:
                return _invalid(u, f"Feature {u.name} not found.")
            return _invalid(u, f"Local controller {self.controller_id} does not support this feature.")
        low, high = supported[u.name]
        if not low <= u.level <= high:
            return _invalid(u, f"Local controller {self.controller_id} only supports versions {low}-{high}")
        if u.level < current and u.upgrade_type == UPGRADE:
            return _invalid(u, "Can't downgrade the version of this feature without setting the upgrade type "
                               "to either safe or unsafe downgrade.")
        if u.level > current and u.upgrade_type != UPGRADE:
            return _invalid(u, "Can't downgrade to a newer version.")
        if u.name == METADATA_VERSION and u.level < current:
            # 4.3-IV0 changed the metadata format: no metadata downgrade from it (MetadataVersion)
            if u.upgrade_type == UNSAFE_DOWNGRADE:
                return f"Invalid metadata.version {u.level}. Unsafe metadata downgrade is not supported in this version."
            return (f"Invalid metadata.version {u.level}. Refusing to perform the requested downgrade because it "
                    f"might delete metadata information.")
        if u.name == KRAFT_VERSION and u.upgrade_type != UPGRADE:
            return _invalid(u, "Can't downgrade the version of this feature.")
        return None


def _invalid(u: FeatureUpdate, message: str) -> str:
    return f"Invalid update version {u.level} for feature {u.name}. {message}"
