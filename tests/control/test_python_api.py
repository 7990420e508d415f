"""The ``KafkaEmulator`` control methods are made from the operation table; the names and
signatures users call stay as they were."""
import inspect

import pytest

from kafkaemu.control import python_api
from kafkaemu.control.params import parse_params
from kafkaemu.control.table import OPS
from kafkaemu.testing import KafkaEmulator

P, K = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
# name -> [(parameter, kind, default)] of the hand-written methods before the table made them
LEGACY = {
    "now_ms": [], "advance_clock": [("ms", P, None)], "set_clock": [("when", P, None)],
    "expire_member": [("group", P, None), ("member_id", P, None), ("instance_id", K, None), ("client_id", K, None)],
    "inject_fault": [("api", P, None), ("error", K, None), ("delay_ms", K, 0), ("drop_connection", K, False),
                     ("black_hole", K, False), ("times", K, 1), ("client_id", K, None), ("min_version", K, None),
                     ("max_version", K, None), ("node", K, None), ("topic", K, None), ("partition", K, None),
                     ("error_code", K, None)],
    "faults": [], "remove_fault": [("rule_id", P, None)], "clear_faults": [], "nodes": [],
    "stop_node": [("node_id", P, None), ("leaders", P, "move")],
    "start_node": [("node_id", P, None), ("restore_leaders", P, True)],
    "move_leader": [("topic", P, None), ("partition", P, None), ("node_id", P, None)],
    "move_coordinator": [("group", P, None), ("node_id", P, None)],
    "cap_api_version": [("api", P, None), ("max_version", P, None)], "clear_api_version_caps": [],
    "enable_request_log": [("bodies", P, False), ("capacity", P, None)], "disable_request_log": [],
    "requests": [("after", K, None), ("api", K, None), ("client_id", K, None), ("node", K, None),
                 ("errors", K, False), ("limit", K, None)],
    "clear_request_log": [], "topics": [("internal", P, False)],
    "create_topic": [("name", P, None), ("partitions", P, 1), ("configs", P, None)],
    "topic": [("name", P, None)], "groups": [], "group": [("group_id", P, None)],
    "await_group": [("group", P, None), ("state", K, None), ("generation", K, None), ("members", K, None),
                    ("assigned", K, False), ("timeout", K, 30)],
    "await_lag": [("group", P, None), ("lag", P, 0), ("topic", K, None), ("timeout", K, 30)],
    "await_offset": [("topic", P, None), ("partition", P, None), ("offset", P, None), ("group", K, None),
                     ("timeout", K, 30)],
    "snapshot": [("name", P, None)], "restore": [("name", P, None)], "snapshots": [],
    "delete_snapshot": [("name", P, None)], "reset": [],
    "transaction_state": [("transactional_id", P, None)], "hold_transaction": [("transactional_id", P, None)],
    "release_transaction": [("transactional_id", P, None)], "abort_transaction": [("transactional_id", P, None)],
    "time_out_transaction": [("transactional_id", P, None)], "fence_producer": [("transactional_id", P, None)],
    "move_transaction_coordinator": [("transactional_id", P, None), ("node_id", P, None)],
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_the_methods_users_call_keep_their_signatures(name):
    params = inspect.signature(getattr(KafkaEmulator, name)).parameters
    for pname, kind, default in LEGACY[name]:
        assert pname in params, f"KafkaEmulator.{name} lost its parameter {pname}"
        p = params[pname]
        assert p.kind == kind and (p.default is inspect.Parameter.empty or p.default == default), (name, p)
    required = {n for n, p in params.items() if n != "self" and p.default is inspect.Parameter.empty}
    assert required <= {n for n, _, default in LEGACY[name] if default is None}, "a new required parameter"


def test_every_method_maps_to_parameters_its_operation_takes():
    for spec in OPS.values():
        for py in spec.py:
            to_params, signature = python_api.mapping(spec, py)
            args = {n: "1" for n, p in signature.parameters.items() if p.default is inspect.Parameter.empty}
            given = {k: v for k, v in to_params(**args).items() if v is not None}
            unknown = set(given) - set(spec.params)
            assert not unknown, f"KafkaEmulator.{py.name} sends {unknown} that {spec.name} does not take"


def test_methods_carry_the_operation_help():
    assert "Move the manual clock forward" in KafkaEmulator.advance_clock.__doc__
    assert "POST /api/clock/advance" in KafkaEmulator.advance_clock.__doc__
    assert KafkaEmulator.delete_topic.control_op == "topic_delete"


def test_a_hand_written_method_cannot_shadow_a_generated_one():
    class Emulator:
        def advance_clock(self):
            pass
    with pytest.raises(TypeError, match="both written by hand and generated"):
        python_api.install(Emulator)


def test_parse_params_is_what_every_way_in_shares():
    with pytest.raises(Exception, match="unknown parameter"):
        parse_params("clock_advance", OPS["clock_advance"].params, {"ms": 1, "typo": 2})
