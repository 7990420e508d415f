"""The catalogue indexes the spec files by their message lines, reading first the file a message's
number or kind names, and parses a file only when one of its messages is first used."""
import threading
from pathlib import Path

import pytest

from kafkaemu.protocol.catalog import Catalog, SpecFiles, catalog, spec_dir
from kafkaemu.protocol.spec import MESSAGE_LINE, load_spec_dir

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


def test_a_message_declared_twice_is_refused_when_every_file_is_indexed():
    with pytest.raises(ValueError, match="duplicate request 12"):
        list(Catalog({"a.spec": HEARTBEAT, "b.spec": HEARTBEAT}).requests)
    with pytest.raises(ValueError, match="duplicate request 12"):   # not in 012_*.spec: every file is read
        Catalog({"a.spec": HEARTBEAT, "b.spec": HEARTBEAT}).requests[12]


class ReadRecorder(dict):
    """Spec texts that note which files were read."""

    def __init__(self, texts):
        super().__init__(texts)
        self.read = []

    def __getitem__(self, source):
        self.read.append(source)
        return super().__getitem__(source)


def test_answering_api_versions_reads_only_its_file_and_the_headers():
    files = ReadRecorder(SpecFiles(spec_dir()))
    cat = Catalog(files)
    cat.request(18, 3), cat.response(18, 3), cat.data("RequestHeader", 2), cat.data("ResponseHeader", 1)
    assert sorted(files.read) == ["018_api_versions.spec", "headers.spec"]
    assert cat.responses[18].name == "ApiVersionsResponse"
    assert cat.data("ConsumerProtocolAssignment", 0)   # in records/: found by reading every file
    assert len(set(files.read)) == len(files) == len(files.read)   # each file read once


def test_a_message_outside_the_file_its_number_names_is_found_all_the_same():
    cat = Catalog({"001_other.spec": BROKEN.replace("99", "1"), "heartbeats.spec": HEARTBEAT,
                   "records/x.spec": "header  OddHeader  versions:0  flexible:none\n  a: int8\n"})
    assert cat.responses[12].name == "HeartbeatResponse" and cat.others["OddHeader"].name == "OddHeader"
    assert sorted(cat.requests) == [1, 12]
    with pytest.raises(KeyError):
        cat.requests[2]


def test_the_spec_files_follow_the_lookup_convention():
    """A numbered file declares only its API's request and response; the other messages are in
    files without a number (so a lookup by convention finds what indexing every file finds)."""
    files = SpecFiles(spec_dir())
    for source in files:
        for m in MESSAGE_LINE.finditer(files[source]):
            if source[:1].isdigit():
                assert m.group(1) in ("request", "response") and int(m.group(2)) == int(source[:3]), source
            else:
                assert m.group(1) not in ("request", "response"), source


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
