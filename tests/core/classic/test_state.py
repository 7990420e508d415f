import pytest

from kafkaemu.core.classic.group import ClassicGroup
from kafkaemu.core.classic.state import ClassicGroupState as S, IllegalStateTransition, check_transition

# Kafka's ClassicGroupState: each state's valid previous states.
KAFKA_PREDECESSORS = {
    S.EMPTY: {S.PREPARING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
}


def test_predecessors_match_kafka():
    assert {s: set(s.valid_previous_states) for s in S} == KAFKA_PREDECESSORS


@pytest.mark.parametrize("src", list(S))
@pytest.mark.parametrize("dst", list(S))
def test_every_transition_is_allowed_or_raises(src, dst):
    if src in KAFKA_PREDECESSORS[dst]:
        check_transition(src, dst)
    else:
        with pytest.raises(IllegalStateTransition):
            check_transition(src, dst)


def test_group_refuses_illegal_transition_and_keeps_its_state():
    seen = []
    g = ClassicGroup("g", 0, on_transition=lambda grp, a, b: seen.append((a, b)))
    with pytest.raises(IllegalStateTransition):
        g.transition_to(S.STABLE, 5)
    assert g.state is S.EMPTY and seen == []
    g.transition_to(S.PREPARING_REBALANCE, 7)
    assert (g.state, g.previous_state, g.current_state_timestamp_ms) == (S.PREPARING_REBALANCE, S.EMPTY, 7)
    assert seen == [(S.EMPTY, S.PREPARING_REBALANCE)]


def test_state_names_are_kafkas():
    assert [s.value for s in S] == ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]
