"""Topics: list, read, create and delete them without a client."""
from __future__ import annotations

from ..params import ControlError, bad, boolean, integer, text
from ..table import Cli, P, Py, op
from ..views import topic_view
from .base import ControlBase


def _configs(name: str, value) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise bad(f"{name} must be an object of topic configs, got {value!r}")
    if not all(v is None or isinstance(v, (str, int, float, bool)) for v in value.values()):
        raise bad(f"{name}: each topic config is a string or a number")
    return {k: str(v) for k, v in value.items()}


_configs.kind = "mapping"


class TopicOps(ControlBase):
    @op("GET", "/api/topics", internal=P(boolean, default=False, help="include __consumer_offsets"),
        py=Py("topics", lambda internal=False: {"internal": internal or None}, result="topics"), cli=Cli("topics"))
    def topics(self, internal: bool) -> dict:
        """Topics with each partition's leader, log start, high watermark and LSO."""
        return {"topics": [topic_view(self.broker, t) for t in self.broker.store.topics.values()
                           if internal or not t.internal]}

    @op("GET", "/api/topics/{topic}", topic=P(text, required=True, help="the topic's name"),
        py=Py("topic", lambda name: {"topic": name}), cli=Cli("topic", "topic"))
    def topic(self, topic: str) -> dict:
        """One topic with its partitions and configs."""
        return topic_view(self.broker, self._topic(topic))

    @op("POST", "/api/topics", name=P(text, required=True, help="the topic's name"),
        partitions=P(integer(min=1, max=100_000), default=1, help="how many partitions (default 1)"),
        configs=P(_configs, default=None, help="topic configs as {name: value} (ctl: --config NAME=VALUE)"),
        py=Py("create_topic", lambda name, partitions=1, configs=None:
              {"name": name, "partitions": partitions, "configs": configs}),
        cli=Cli("create-topic", "name", flags={"configs": "--config"}))
    def topic_create(self, name: str, partitions: int, configs: dict | None) -> dict:
        """Create a topic (as CreateTopics would, without a client)."""
        from ...storage.log_store import TopicError
        try:
            topic = self.broker.topics.create(name, partitions, configs or {})
        except TopicError as exc:
            if exc.code.name == "TOPIC_ALREADY_EXISTS":
                raise ControlError(409, str(exc)) from None
            raise bad(str(exc)) from None
        return topic_view(self.broker, topic)

    @op("DELETE", "/api/topics/{topic}", topic=P(text, required=True, help="the topic's name"),
        py=Py("delete_topic", lambda name: {"topic": name}), cli=Cli("delete-topic", "topic"))
    def topic_delete(self, topic: str) -> dict:
        """Delete a topic (its committed offsets go, as with DeleteTopics)."""
        t = self._topic(topic)
        if t.internal:
            raise ControlError(409, f"{topic} is internal")
        view = topic_view(self.broker, t)
        self.broker.topics.delete(topic)
        return view
