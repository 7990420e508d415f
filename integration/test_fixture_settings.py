"""The pytest plugin's fixtures take settings: the ``kafkaemu_settings`` ini option, an overridden
``kafkaemu_settings`` fixture, a ``kafkaemu`` marker and the ``kafka_emulator_factory`` fixture;
and on a manual clock a group is reached without arithmetic (``advance_until_group``)."""
pytest_plugins = ["pytester"]


def test_ini_settings_marker_and_factory(pytester):
    pytester.makeini("""
        [pytest]
        kafkaemu_settings =
            manual_clock = true
            nodes = 2
            group.initial.rebalance.delay.ms = 0
    """)
    pytester.makepyfile(test_inner="""
        import pytest

        def test_session_emulator_has_the_ini_settings(kafka_emulator):
            assert kafka_emulator.config.manual_clock and kafka_emulator.config.nodes == 2
            assert kafka_emulator.config.classic.initial_rebalance_delay_ms == 0
            before = kafka_emulator.now_ms()
            assert kafka_emulator.advance_clock("1h") == before + 3_600_000

        @pytest.mark.kafkaemu(nodes=3, extra={"num.partitions": 4})
        def test_a_marker_configures_the_fresh_emulator(fresh_kafka_emulator):
            config = fresh_kafka_emulator.config
            assert config.nodes == 3 and config.num_partitions == 4 and config.manual_clock
            assert len(fresh_kafka_emulator.nodes()) == 3

        def test_the_factory_takes_settings_of_the_test(kafka_emulator_factory, tmp_path):
            first = kafka_emulator_factory(data_dir=str(tmp_path), sasl_users={"alice": "pw"})
            second = kafka_emulator_factory(manual_clock=False, nodes=1)
            assert first.config.data_dir == str(tmp_path) and first.security_protocol == "SASL_PLAINTEXT"
            assert not second.config.manual_clock and first.port != second.port
    """)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_an_overridden_settings_fixture_and_a_bad_setting(pytester):
    pytester.makeconftest("""
        import pytest

        @pytest.fixture(scope="session")
        def kafkaemu_settings():
            return {"num_partitions": 5}
    """)
    pytester.makepyfile(test_inner="""
        def test_it(kafka_emulator):
            assert kafka_emulator.config.num_partitions == 5
    """)
    pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.makeini("""
        [pytest]
        kafkaemu_settings = group.initial.rebalance.delay = 0
    """)
    pytester.makeconftest("")
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown setting 'group.initial.rebalance.delay'*"])


def test_a_new_group_on_the_manual_clock_is_reached_without_arithmetic():
    from kafka import KafkaConsumer
    import pytest
    from kafkaemu.control.params import AwaitTimeout
    from kafkaemu.testing import KafkaEmulator
    with KafkaEmulator(manual_clock=True, group_initial_rebalance_delay_ms=3000) as kafka:
        kafka.create_topic("t", 2)
        consumer = KafkaConsumer("t", bootstrap_servers=kafka.bootstrap_server, group_id="g",
                                 consumer_timeout_ms=100)
        try:
            for _ in consumer:      # polling makes it join; it waits for the delay on the manual clock
                pass
            with pytest.raises(AwaitTimeout, match=r"waiting for group 'g': state Stable; now: state "
                                                   r"PreparingRebalance, generation 0, 1 member"):
                kafka.await_group("g", state="Stable", timeout=0.5)   # the initial delay has not passed
            group = kafka.advance_until_group("g", state="Stable", members=1, step="1s", limit="1m",
                                              settle=0.5)
            assert group["state"] == "Stable"
            with pytest.raises(AwaitTimeout, match=r"group 'g': state Empty did not hold after advancing the "
                                                   r"clock 2000 ms; now: state Stable, generation 1, 1 member"):
                kafka.advance_until_group("g", state="Empty", step="1s", limit="2s", settle=0)
        finally:
            consumer.close()
