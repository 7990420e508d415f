"""DescribeUserScramCredentials/AlterUserScramCredentials over the credential store, as Kafka's
ScramControlManager and ScramImage answer."""
from kafkaemu.auth import scram_admin
from kafkaemu.auth.credentials import CredentialStore
from kafkaemu.auth.scram import ScramServer, salted_password
from kafkaemu.protocol.errors import ErrorCode as E

SHA256, SHA512 = 1, 2


def salted(password, salt=b"salt", iterations=4096, hash_name="sha256"):
    return salted_password(password, salt, iterations, hash_name)


def codes(results):
    return {r["user"]: r["error_code"] for r in results}


def test_upsert_describe_delete():
    store = CredentialStore({"seed": "pw"})
    changes = []
    store.on_change = lambda: changes.append(1)
    assert codes(scram_admin.alter(store, [], [("carol", SHA256, 8192, b"salt", salted("c", iterations=8192))])) \
        == {"carol": E.NONE}
    assert scram_admin.describe(store, ["carol"]) == [
        {"user": "carol", "error_code": E.NONE, "error_message": None,
         "credential_infos": [{"mechanism": SHA256, "iterations": 8192}]}]
    assert {r["user"] for r in scram_admin.describe(store, None)} == {"carol", "seed"}
    assert codes(scram_admin.alter(store, [("carol", SHA256)], [])) == {"carol": E.NONE}
    assert codes(scram_admin.describe(store, ["carol", "x", "x"])) == {"carol": E.RESOURCE_NOT_FOUND,
                                                                      "x": E.DUPLICATE_RESOURCE}
    assert changes == [1, 1]


def test_kafkas_validation():
    store = CredentialStore({})
    results = codes(scram_admin.alter(store, [("ghost", SHA256), ("twice", SHA256), ("", SHA512)], [
        ("twice", SHA256, 4096, b"s", b"p"), ("few", SHA256, 4095, b"s", b"p"), ("many", SHA512, 16385, b"s", b"p"),
        ("bad", 3, 4096, b"s", b"p"), ("both", SHA256, 4096, b"s", b"p"), ("both", SHA512, 4096, b"s", b"p")]))
    assert results == {"ghost": E.RESOURCE_NOT_FOUND, "twice": E.RESOURCE_NOT_FOUND, "": E.UNACCEPTABLE_CREDENTIAL,
                       "few": E.UNACCEPTABLE_CREDENTIAL, "many": E.UNACCEPTABLE_CREDENTIAL,
                       "bad": E.UNSUPPORTED_SASL_MECHANISM, "both": E.DUPLICATE_RESOURCE}
    assert store.scram_users() == []


def test_an_upserted_credential_authenticates_the_next_exchange():
    store = CredentialStore({}, ("SCRAM-SHA-256",))
    server = store.new_server("SCRAM-SHA-256")   # started before the change: the change is seen at lookup
    scram_admin.alter(store, [], [("carol", SHA256, 4096, b"salt", salted("secret"))])
    first = server.evaluate(b"n,,n=carol,r=abc")
    assert first.startswith(b"r=abc")
    assert isinstance(server, ScramServer)
    assert store.scram_to_json()["SCRAM-SHA-256"]["carol"]["iterations"] == 4096
    copy = CredentialStore({})
    copy.load_scram_json(store.scram_to_json())
    assert copy.scram_info("carol") == [(SHA256, 4096)]
