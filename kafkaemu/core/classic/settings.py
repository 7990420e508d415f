"""Classic groups' broker settings (group.*), as Kafka 4.4's GroupCoordinatorConfig declares them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..settings import INT32_MAX, setting


@dataclass
class ClassicSettings:
    """The classic group coordinator's settings, each with its Kafka name (``group.*``)."""
    min_session_timeout_ms: int = setting(
        6000, "group.min.session.timeout.ms", "smallest session timeout a member may ask for", min=None)
    max_session_timeout_ms: int = setting(
        1800000, "group.max.session.timeout.ms", "largest session timeout a member may ask for", min=None)
    initial_rebalance_delay_ms: int = setting(
        150, "group.initial.rebalance.delay.ms", "how long an empty group waits for more members "
                                                 "(Kafka's default is 3000; see docs/groups.md)", min=None)
    max_size: int = setting(INT32_MAX, "group.max.size", "most members of a classic group", min=1)

    # how long a new member's JoinGroup waits for the rebalance: a constant in Kafka, not a setting
    new_member_join_timeout_ms: ClassVar[int] = 5 * 60 * 1000
    CHECKS: ClassVar[tuple] = (("max_session_timeout_ms", ">=", "min_session_timeout_ms"),)
