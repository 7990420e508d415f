"""The client quota and telemetry controls through KafkaEmulator: set, list, remove (with Kafka's
refusals), their part in snapshots, restore and reset, and the web page's telemetry section."""
import pytest

from kafkaemu.control.params import ControlError
from kafkaemu.testing import KafkaEmulator


def test_client_quota_controls_and_snapshots():
    with KafkaEmulator() as e:
        assert e.set_client_quota("producer_byte_rate", 1024, client_id="c") == {
            "entity": {"client-id": "c"}, "values": {"producer_byte_rate": 1024.0}}
        e.set_client_quota("request_percentage", 50, user="<default>", client_id="<default>")
        with pytest.raises(ControlError) as info:
            e.set_client_quota("producer_byte_rate", 1.5, client_id="c")
        assert info.value.status == 400 and "cannot be a fractional value" in str(info.value)
        with pytest.raises(ControlError):
            e.set_client_quota("producer_byte_rate", 10)          # no entity
        quotas = e.client_quotas()
        assert {(tuple(q["entity"].items()), tuple(q["values"].items())) for q in quotas["quotas"]} == {
            ((("client-id", "c"),), (("producer_byte_rate", 1024.0),)),
            ((("client-id", "<default>"), ("user", "<default>")), (("request_percentage", 50.0),))}
        assert quotas["clients"] == {"produce": [], "fetch": [], "request": []}
        e.snapshot("two")
        e.remove_client_quota("producer_byte_rate", client_id="c")
        assert len(e.client_quotas()["quotas"]) == 1
        e.restore("two")
        assert len(e.client_quotas()["quotas"]) == 2
        e.reset()
        assert e.client_quotas()["quotas"] == []


def test_telemetry_control_and_reset():
    from kafkaemu.control.web import render_page
    with KafkaEmulator() as e:
        def subscribe(broker):
            broker.client_metrics.alter("all", {"metrics": "*", "interval.ms": "1000"})
        e.call(subscribe)
        assert e.telemetry() == {"subscriptions": [{"name": "all", "configs": {"metrics": "*", "interval.ms": "1000"}}],
                                 "clients": []}
        page = e.call(lambda broker: render_page(e.server.control, "")).decode()
        assert '<section id="telemetry">' in page
        assert "No client has pushed metrics yet (1 CLIENT_METRICS subscription)" in page
        e.reset()
        assert e.telemetry() == {"subscriptions": [], "clients": []}
