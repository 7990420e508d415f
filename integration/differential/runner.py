"""Runs a scenario against Kafka and against kafkaemu and compares what each answered."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.envelope import api_name

from .compare import Difference, compare
from .known import explain
from .ledger import LEDGER, Found, Ledger
from .normalise import Normaliser
from .peer import Peer

Scenario = Callable[[Peer], None]


@dataclass
class Outcome:
    fields: int = 0
    found: list[Found] = field(default_factory=list)

    @property
    def unexplained(self) -> list[Found]:
        return [f for f in self.found if f.known is None]

    def report(self) -> str:
        return "\n".join(f"  {f.scenario} / {f.label}: {f.difference.path}: Kafka {f.difference.kafka!r}, "
                         f"kafkaemu {f.difference.kafkaemu!r}" for f in self.unexplained)


def _advertised(bootstrap: str, users: dict[str, str] | None, user: str | None) -> dict[int, tuple[int, int]]:
    peer = Peer("", bootstrap, "", users=users, default_user=user)
    try:
        answer = peer.send(ApiKey.API_VERSIONS, 3, {"client_software_name": "differential",
                                                    "client_software_version": "1"})
    finally:
        peer.close()
    return {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}


class Differential:
    def __init__(self, kafka: str, kafkaemu: str, ledger: Ledger = LEDGER, *, users: dict[str, str] | None = None,
                 default_user: str | None = None) -> None:
        """``users`` and ``default_user`` when both brokers listen with SASL_PLAINTEXT (Peer)."""
        self.bootstrap = {"kafka": kafka, "kafkaemu": kafkaemu}
        self.ledger = ledger
        self.users, self.default_user = users, default_user
        self.advertised = {broker: _advertised(bootstrap, users, default_user)
                           for broker, bootstrap in self.bootstrap.items()}
        for broker, ranges in self.advertised.items():
            for key, span in ranges.items():
                ledger.advertised.setdefault(api_name(key), {})[broker] = span

    def versions(self, api_key: int) -> range:
        """The versions of an API both brokers advertise (empty when one does not have it)."""
        spans = [self.advertised[b].get(api_key) for b in self.bootstrap]
        if None in spans:
            return range(0)
        return range(max(s[0] for s in spans), min(s[1] for s in spans) + 1)

    def _run(self, broker: str, scenario: Scenario, name: str) -> tuple[Peer, str | None]:
        peer = Peer(broker, self.bootstrap[broker], name, users=self.users, default_user=self.default_user)
        try:
            scenario(peer)
            return peer, None
        except Exception as exc:
            return peer, f"{type(exc).__name__}: {exc}"
        finally:
            peer.close()

    def run(self, scenario: Scenario, name: str) -> Outcome:
        kafka, kafka_failed = self._run("kafka", scenario, name)
        emu, emu_failed = self._run("kafkaemu", scenario, name)
        outcome = Outcome()
        norm_kafka, norm_emu = Normaliser(), Normaliser()
        for k, e in zip(kafka.exchanges, emu.exchanges):
            if (k.label, k.api_key, k.version) != (e.label, e.api_key, e.version):
                found = [Found(name, k.label, Difference("<next request>", f"{k.label} {k.api} v{k.version}",
                                                         f"{e.label} {e.api} v{e.version}"), None)]
                outcome.found += found
                self.ledger.record(k.api, k.version, name, k.label, 0, found)
                break
            result = compare(norm_kafka(k.api, k.answer), norm_emu(e.api, e.answer), k.api_key)
            found = [Found(name, k.label, d, explain(k.api, name, d.path, k.label)) for d in result.differences]
            outcome.fields += result.fields
            outcome.found += found
            self.ledger.record(k.api, k.version, name, k.label, result.fields, found)
        else:
            if len(kafka.exchanges) != len(emu.exchanges) or kafka_failed or emu_failed:
                outcome.found.append(Found(name, "<scenario>", Difference(
                    "<exchanges>", f"{len(kafka.exchanges)} exchanges, {kafka_failed or 'completed'}",
                    f"{len(emu.exchanges)} exchanges, {emu_failed or 'completed'}"), None))
        self.ledger.normalised.update(norm_kafka.applied)
        self.ledger.normalised.update(norm_emu.applied)
        return outcome

    def check_observed(self, observe: Callable[[str], dict], name: str, client: str) -> Outcome:
        """What a client library saw running ``observe(bootstrap)`` against each broker, compared as an
        answer is (recorded as ``client`` in docs/fidelity.md); fails as ``check`` does."""
        seen = {broker: observe(bootstrap) for broker, bootstrap in self.bootstrap.items()}
        result = compare(Normaliser()(client, seen["kafka"]), Normaliser()(client, seen["kafkaemu"]))
        found = [Found(name, "what the client saw", d, explain(client, name, d.path)) for d in result.differences]
        self.ledger.record(client, 0, name, "what the client saw", result.fields, found)
        outcome = Outcome(result.fields, found)
        assert not outcome.unexplained, f"{name}: {client} saw differently:\n{outcome.report()}"
        assert outcome.fields > 0, f"{name}: nothing was compared"
        return outcome

    def check(self, scenario: Scenario, name: str) -> Outcome:
        """Run, and fail on any difference known.py does not explain."""
        outcome = self.run(scenario, name)
        assert not outcome.unexplained, f"{name}: answers differ from Kafka 4.4.0's:\n{outcome.report()}"
        assert outcome.fields > 0, f"{name}: nothing was compared"
        return outcome
