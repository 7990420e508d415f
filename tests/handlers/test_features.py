"""ApiVersions' supported and finalized features as a Kafka 4.3 cluster's, and UpdateFeatures with
FeatureControlManager's refusals (messages as a 4.3 controller words them)."""
import pytest

from kafkaemu.config import BrokerConfig
from kafkaemu.core.features import TRANSACTION_VERSION
from kafkaemu.handlers.registry import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import call, new_broker

SOFTWARE = {"client_software_name": "t", "client_software_version": "1"}
ALL_FAILED = "The update failed for all features since the following feature had an error: "
# Transactions V2 is supported once EndTxn v5 is handled; until then transaction.version stops at 1
TV_MAX = 2 if REGISTRY.supports(ApiKey.END_TXN, 5) else 1


def versions(broker, version=4):
    resp = call(broker, ApiKey.API_VERSIONS, version, SOFTWARE)
    supported = {f.name: (f.min_version, f.max_version) for f in resp.supported_features}
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in resp.finalized_features}
    return supported, finalized, resp.finalized_features_epoch


def update(broker, *features, version=2, validate_only=False, **context):
    body = {"timeout_ms": 1000, "validate_only": validate_only, "feature_updates": [
        {"feature": name, "max_version_level": level, "upgrade_type": kind, "allow_downgrade": kind == 2}
        for name, level, kind in features]}
    return call(broker, ApiKey.UPDATE_FEATURES, version, body, **context)


def test_a_new_4_4_cluster_finalizes_its_features(broker):
    supported, finalized, epoch = versions(broker)
    assert supported == {"metadata.version": (7, 33), "kraft.version": (0, 1), "transaction.version": (0, TV_MAX),
                         "group.version": (0, 1), "eligible.leader.replicas.version": (0, 1),
                         "share.version": (0, 2), "streams.version": (0, 1)}
    assert finalized == {"metadata.version": (33, 33), "kraft.version": (1, 1),
                         "transaction.version": (TV_MAX, TV_MAX), "group.version": (1, 1),
                         "eligible.leader.replicas.version": (1, 1), "share.version": (2, 2),
                         "streams.version": (1, 1)}
    assert epoch > 0
    assert broker.services.features.level(TRANSACTION_VERSION) == 2   # what Kafka 4.4 finalizes


def test_before_v4_features_with_a_zero_minimum_are_left_out(broker):
    """Clients older than KAFKA-17011's fix cannot parse a supported minimum of 0: Kafka 4.4's
    ApiVersionsResponse leaves those features out below v4 (KAFKA-17492)."""
    supported, _, _ = versions(broker, version=3)
    assert supported == {"metadata.version": (7, 33)}


def test_a_setting_caps_transaction_version_as_kafka_storage_format_does():
    broker = new_broker(finalized_features=("transaction.version=1",))
    assert broker.services.features.level(TRANSACTION_VERSION) == 1
    assert versions(broker)[1]["transaction.version"] == (1, 1)
    assert "transaction.version" not in versions(new_broker(finalized_features=("transaction.version=0",)))[1]


def test_a_bad_feature_setting_stops_start_up_with_one_line():
    with pytest.raises(ValueError, match="unknown feature 'nope.version'"):
        BrokerConfig(finalized_features=("nope.version=1",)).validate()
    with pytest.raises(ValueError, match="transaction.version supports levels 0-2, got 5"):
        BrokerConfig(finalized_features=("transaction.version=5",)).validate()


def test_a_downgrade_is_finalized_with_a_newer_epoch_and_upgraded_back(broker):
    _, before, epoch = versions(broker)
    resp = update(broker, ("group.version", 0, 2))
    assert (resp.error_code, resp.error_message) == (E.NONE, "NONE")
    _, after, later = versions(broker)
    assert "group.version" not in after and later > epoch   # a feature at 0 is not finalized
    assert update(broker, ("group.version", 1, 1)).error_code == E.NONE
    assert versions(broker)[1] == before


def test_transaction_version_can_be_capped_to_1_and_raised_again(broker):
    assert update(broker, ("transaction.version", 1, 2 if TV_MAX == 2 else 1)).error_code == E.NONE
    assert broker.services.features.level(TRANSACTION_VERSION) == 1
    assert versions(broker)[1]["transaction.version"] == (1, 1)
    assert update(broker, ("transaction.version", TV_MAX, 1)).error_code == E.NONE
    assert versions(broker)[1]["transaction.version"] == (TV_MAX, TV_MAX)


@pytest.mark.parametrize(("feature", "kind", "reason"), [
    (("nonsense", 1), 1, "Invalid update version 1 for feature nonsense. Local controller 0 does not support "
                         "this feature."),
    (("nonsense", 0), 2, "Invalid update version 0 for feature nonsense. Feature nonsense not found."),
    (("metadata.version", 99), 1, "Invalid update version 99 for feature metadata.version. Local controller 0 "
                                  "only supports versions 7-33"),
    (("metadata.version", 29), 1, "Invalid update version 29 for feature metadata.version. Can't downgrade the "
                                  "version of this feature without setting the upgrade type to either safe or "
                                  "unsafe downgrade."),
    (("metadata.version", 29), 2, "Invalid metadata.version 29. Refusing to perform the requested downgrade "
                                  "because it might delete metadata information."),
    (("metadata.version", 29), 3, "Invalid metadata.version 29. Unsafe metadata downgrade is not supported in "
                                  "this version."),
    (("group.version", 0), 1, "Invalid update version 0 for feature group.version. Can't downgrade the version "
                              "of this feature without setting the upgrade type to either safe or unsafe "
                              "downgrade."),
    (("share.version", -1), 2, "Invalid update version -1 for feature share.version. A feature version cannot be "
                               "less than 0."),
    (("kraft.version", 0), 2, "Invalid update version 0 for feature kraft.version. Can't downgrade the version "
                              "of this feature."),
    (("group.version", 1), 7, "Invalid update version 1 for feature group.version. The controller does not "
                              "support the given upgrade type."),
])
def test_refused_updates_fail_the_whole_request_as_a_4_3_controller(broker, feature, kind, reason):
    _, before, epoch = versions(broker)
    resp = update(broker, ("share.version", 0, 2), (*feature, kind))
    assert (resp.error_code, resp.error_message) == (E.INVALID_UPDATE_VERSION, ALL_FAILED + reason)
    assert versions(broker)[1:] == (before, epoch)   # share.version, valid, was not applied either


def test_an_upgrade_asked_as_a_downgrade_is_refused(broker):
    update(broker, ("share.version", 0, 2))
    resp = update(broker, ("share.version", 1, 2))
    assert resp.error_message == ALL_FAILED + ("Invalid update version 1 for feature share.version. Can't "
                                               "downgrade to a newer version.")


def test_validate_only_changes_nothing(broker):
    _, before, epoch = versions(broker)
    assert update(broker, ("group.version", 0, 2), validate_only=True).error_code == E.NONE
    assert versions(broker)[1:] == (before, epoch)


def test_versions_0_and_1_answer_per_feature_results(broker):
    resp = update(broker, ("group.version", 0, 2), version=0)   # v0: allow_downgrade
    assert [(r.feature, r.error_code) for r in resp.results] == [("group.version", E.NONE)]
    assert "group.version" not in versions(broker)[1]
    refused = update(broker, ("nonsense", 1, 1), version=1)
    assert (refused.error_code, list(refused.results)) == (E.INVALID_UPDATE_VERSION, [])


@pytest.mark.broker(authorizer=True, super_users="User:admin")
def test_update_features_needs_alter_on_the_cluster(broker):
    resp = update(broker, ("group.version", 0, 2), principal="User:alice")
    assert resp.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert "group.version" in versions(broker)[1]
    assert update(broker, ("group.version", 0, 2), principal="User:admin").error_code == E.NONE


def test_each_broker_keeps_its_own_features():
    first, second = new_broker(), new_broker()
    update(first, ("group.version", 0, 2))
    assert "group.version" in versions(second)[1]
