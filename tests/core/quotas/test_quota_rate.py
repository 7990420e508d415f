"""Kafka's sampled Rate and throttle time (QuotaUtils.throttleTime), on a manual clock."""
from kafkaemu.core.quotas.entities import ClientQuotas, Entity
from kafkaemu.core.quotas.manager import QuotaManager
from kafkaemu.core.quotas.rate import Rate, throttle_time_ms


def test_rate_window_is_at_least_samples_minus_one_windows():
    rate = Rate(11, 1000)
    rate.record(10_000, 0)
    # one sample of 0 ms: the window counts 10 full windows, so 10,000 bytes is 1,000/s
    assert rate.window_size_ms(0) == 10_000
    assert rate.measure(0) == 1000.0
    rate.record(10_000, 500)
    assert rate.measure(500) == 20_000 / 10.5


def test_throttle_time_brings_the_rate_back_to_the_bound():
    rate = Rate(11, 1000)
    rate.record(30_000, 0)
    value = rate.measure(0)   # 3,000/s over 10 s
    throttle = throttle_time_ms(rate, value, 1000.0, 0)
    assert throttle == 20_000
    # after the throttle, the same bytes over the longer window are within the bound
    assert rate.measure(throttle) <= 1000.0 + 1e-9


def test_old_samples_expire():
    rate = Rate(11, 1000)
    rate.record(50_000, 0)
    assert rate.measure(11_000) == 0.0


def test_manager_throttles_only_clients_over_their_quota():
    quotas = ClientQuotas()
    quotas.alter([(Entity({("client-id", "slow")}), [("producer_byte_rate", 1000.0, False)])])
    manager = QuotaManager(quotas, "producer_byte_rate")
    assert manager.record("ANONYMOUS", "fast", 10 ** 9, 0) == 0
    assert manager.record("ANONYMOUS", "slow", 5_000, 0) == 0        # 500/s over 10 s
    assert manager.record("ANONYMOUS", "slow", 10_000, 100) > 0
    assert manager.max_value_in_window("ANONYMOUS", "slow") == 10_000.0
    quotas.alter([(Entity({("client-id", "slow")}), [("producer_byte_rate", 0, True)])])
    assert manager.record("ANONYMOUS", "slow", 10 ** 9, 200) == 0


def test_request_quota_throttle_is_capped_at_one_window():
    quotas = ClientQuotas()
    quotas.alter([(Entity({("user", None)}), [("request_percentage", 1.0, False)])])
    manager = QuotaManager(quotas, "request_percentage", max_throttle_ms=1000)
    assert manager.record("bob", "c", 10_000.0, 0) == 1000
