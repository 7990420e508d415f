"""The catalogue indexes the spec files by their message lines and parses a file only when one of
its messages is first used."""
import threading
from pathlib import Path

import pytest

from kafkaemu.protocol.catalog import Catalog, catalog, spec_dir
from kafkaemu.protocol.spec import load_spec_dir

HEARTBEAT = (Path(spec_dir()) / "012_heartbeat.spec").read_text()
BROKEN = "request  99  BrokenRequest  versions:0  flexible:none\n  what: nosuchtype\n    x: ???\n"


def test_a_file_is_parsed_when_one_of_its_messages_is_first_used():
    cat = Catalog({"012_heartbeat.spec": HEARTBEAT, "099_broken.spec": BROKEN})
    assert sorted(cat.requests) == [12, 99] and list(cat.responses) == [12]   # known without parsing
    body = {"group_id": "g", "generation_id": 3, "member_id": "m", "group_instance_id": None}
    assert cat.request(12, 4).decode(cat.request(12, 4).encode(body)).member_id == "m"
    assert cat.responses[12].name == "HeartbeatResponse"
    with pytest.raises(Exception):
        cat.requests[99]              # the broken file fails when, and only when, it is used
    with pytest.raises(KeyError):
        cat.requests[98]
    assert cat.requests.get(98) is None


def test_a_message_declared_twice_is_refused():
    with pytest.raises(ValueError, match="duplicate request 12"):
        Catalog({"a.spec": HEARTBEAT, "b.spec": HEARTBEAT})


def test_the_lazy_catalogue_holds_what_parsing_every_file_gives():
    messages = load_spec_dir(spec_dir())
    cat = catalog()
    for m in messages:
        table = {"request": cat.requests, "response": cat.responses}.get(m.kind, cat.others)
        assert table[m.api_key if m.kind in ("request", "response") else m.name] == m
    assert len(cat.requests) + len(cat.responses) + len(cat.others) == len(messages)


def test_threads_asking_for_one_file_at_once_all_get_its_messages():
    texts = {f"{i:03d}.spec": HEARTBEAT.replace("  12  ", f"  {i}  ").replace("Heartbeat", f"Heartbeat{i}")
             for i in range(200, 240)}
    cat = Catalog(texts)
    errors = []

    def ask():
        try:
            for key in range(200, 240):
                assert cat.responses[key].name == f"Heartbeat{key}Response"
        except Exception as exc:   # pragma: no cover (the failure this test is for)
            errors.append(exc)
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
