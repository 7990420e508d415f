"""The differences between Kafka's answers and kafkaemu's that are known and explained.

A difference the suite finds passes only when an entry here explains it: on purpose (kafkaemu
differs by design, the reason says why) or open (not yet fixed; ``owner`` names the branch
rebuilding that part, the reason what Kafka does). docs/fidelity.md lists every one found.
An entry matches on the API, the field's path (a regular expression) and optionally the scenario.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    api: str
    path: str
    reason: str
    on_purpose: bool
    owner: str = ""          # for an open one: the branch that owns the code (docs/fidelity.md)
    scenario: str = ".*"

    def explains(self, api: str, scenario: str, path: str) -> bool:
        return (self.api == api and re.fullmatch(self.path, path) is not None
                and re.fullmatch(self.scenario, scenario) is not None)


KNOWN: list[Known] = [
    Known("ApiVersions", r"api_keys\[\d+\].*", on_purpose=False, owner="surface44",
          reason="kafkaemu advertises Kafka 4.3's version ranges: 4.4 dropped old versions (Fetch below 4, "
                 "OffsetCommit below 2, ...), raised some maxima (ApiVersions 5, DescribeProducers 6 ...), adds "
                 "APIs 83-87, 93, 94, and advertises no client-telemetry APIs (71, 72) without a metrics plugin"),
    Known("ApiVersions", r"(supported|finalized)_features\[[a-z.]+\].*", on_purpose=False, owner="surface44",
          reason="Kafka 4.4 finalizes metadata.version 33 and share.version 2; below ApiVersions v4 it "
                 "lists only the supported features whose minimum is above 0 (metadata.version)"),
    Known("CreateTopics", r"topics\.\d+\.configs\[.*", on_purpose=False, owner="kafka-ref",
          reason="kafkaemu's topic configs are Kafka 3.x's: 4.4 dropped message.downconversion.enable, "
                 "message.format.version and message.timestamp.difference.max.ms, added the compression levels, "
                 "max.decompressed.message.bytes, errors.deadletterqueue.group.enable and the remote-copy ones"),
    Known("DeleteTopics", r"responses\.\d+\.error_message", on_purpose=False, owner="kafka-ref",
          reason="Kafka sets the error's default message where kafkaemu sends null"),
    Known("FindCoordinator", r"coordinators\.\d+\.error_message", on_purpose=False, owner="kafka-ref",
          reason="Kafka sets the error's default message where kafkaemu sends null"),
]


def explain(api: str, scenario: str, path: str) -> Known | None:
    return next((k for k in KNOWN if k.explains(api, scenario, path)), None)
