"""The pytest plugin's clean_kafka_emulator: one emulator for the session, reset before each test."""
pytest_plugins = ["pytester"]


def test_each_test_gets_the_shared_emulator_reset(pytester):
    pytester.makepyfile(test_inner="""
        def test_one(clean_kafka_emulator):
            clean_kafka_emulator.control("topic_create", name="left-over", partitions=2)
            clean_kafka_emulator.inject_fault("Fetch", error="NOT_LEADER_OR_FOLLOWER", times=None)
            assert [t["name"] for t in clean_kafka_emulator.topics()] == ["left-over"]

        def test_two(clean_kafka_emulator, kafka_emulator):
            assert clean_kafka_emulator is kafka_emulator
            assert clean_kafka_emulator.topics() == [] and clean_kafka_emulator.faults() == []
    """)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
