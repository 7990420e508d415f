"""inject_fault takes APIs and errors by name as well as by number."""
import pytest

from kafkaemu.faults import api_key_of, error_code_of
from kafkaemu.protocol.errors import ErrorCode


@pytest.mark.parametrize("api,key", [("Heartbeat", 12), ("heartbeat", 12), ("JoinGroup", 11),
                                     ("ConsumerGroupHeartbeat", 68), (12, 12)])
def test_api_names_and_numbers(api, key):
    assert api_key_of(api) == key


@pytest.mark.parametrize("error,code", [("NOT_COORDINATOR", 16), ("not_coordinator", 16), (16, 16),
                                        (ErrorCode.REBALANCE_IN_PROGRESS, 27), ("NOT_LEADER_OR_FOLLOWER", 6)])
def test_error_names_and_numbers(error, code):
    assert error_code_of(error) == code


def test_unknown_names_say_what_was_meant_and_where_the_list_is():
    with pytest.raises(ValueError, match=r"unknown API 'Hartbeat'; did you mean Heartbeat\? \(kafkaemu apis"):
        api_key_of("Hartbeat")
    with pytest.raises(ValueError, match=r"unknown error 'NOT_COORDINATER'; did you mean NOT_COORDINATOR\? "
                                         r"\(kafkaemu errors"):
        error_code_of("NOT_COORDINATER")


def test_the_errors_command_lists_canonical_names(capsys):
    from kafkaemu.cli import main
    assert main(["errors"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert " 16  NOT_COORDINATOR" in lines and "  6  NOT_LEADER_OR_FOLLOWER" in lines
    assert len({line.split()[0] for line in lines}) == len(lines)  # one name per code


def test_docs_list_every_api_name():
    from pathlib import Path

    from kafkaemu.handlers import REGISTRY
    from kafkaemu.protocol.catalog import catalog
    docs = (Path(__file__).resolve().parents[1] / "docs" / "testing.md").read_text()
    listed = docs.split("API names (any case)", 1)[1].split("Error names", 1)[0]
    names = {word.strip(" ,.") for word in listed.split()}
    missing = [catalog().api_name(key) for key, _, _ in REGISTRY.versions() if catalog().api_name(key) not in names]
    assert missing == [], "add these to docs/testing.md"
