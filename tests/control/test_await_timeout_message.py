"""An await_group that times out says, in its message, what the group looked like then."""
import pytest

from kafkaemu.control.params import AwaitTimeout
from tests.control.harness import Env


def test_the_timeout_names_the_groups_state_generation_and_members():
    env = Env()
    env.two_member_group()
    with pytest.raises(AwaitTimeout, match=r"waiting for group 'g': state Empty; now: state Stable, "
                                           r"generation 2, 2 members$"):
        env.op("await_group", group="g", state="Empty", timeout_ms=20)
    with pytest.raises(AwaitTimeout, match=r"; now: the group does not exist$"):
        env.op("await_group", group="nobody", state="Stable", timeout_ms=20)
