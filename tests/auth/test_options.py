"""Security options: CLI flags, BrokerConfig defaults and the listener's security protocol."""
import pytest

from kafkaemu.cli import config_from_args, main
from kafkaemu.cli_parser import build_parser
from kafkaemu.config import BrokerConfig


def parse(*argv):
    return config_from_args(build_parser().parse_args(["serve", *argv]))


def test_security_is_off_by_default():
    config = parse()
    assert config.sasl_users == {} and config.enabled_sasl_mechanisms == ()
    assert config.security_protocol == "PLAINTEXT"


def test_sasl_users_enable_every_mechanism_by_default():
    config = parse("--sasl-user", "alice:s3:cret", "--sasl-user", "bob:pw")
    assert config.sasl_users == {"alice": "s3:cret", "bob": "pw"}  # the password may contain ':'
    assert config.enabled_sasl_mechanisms == ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
    assert config.security_protocol == "SASL_PLAINTEXT"


def test_mechanisms_flag_restricts_the_list():
    config = parse("--sasl-user", "a:b", "--sasl-mechanisms", "scram-sha-512,PLAIN")
    assert config.enabled_sasl_mechanisms == ("SCRAM-SHA-512", "PLAIN")


@pytest.mark.parametrize("argv", [["--sasl-user", "nocolon"], ["--sasl-user", ":pw"],
                                  ["--sasl-user", "a:b", "--sasl-mechanisms", "GSSAPI"]])
def test_bad_sasl_flags_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(["serve", *argv])
    assert info.value.code == 2
    assert "sasl" in capsys.readouterr().err.lower()


def test_tls_flags_and_protocol_names():
    config = parse("--tls-cert", "c.pem", "--tls-key", "k.pem")
    assert (config.tls_cert, config.tls_key, config.security_protocol) == ("c.pem", "k.pem", "SSL")
    assert parse("--tls-cert", "c.pem", "--sasl-user", "a:b").security_protocol == "SASL_SSL"


def test_config_accepts_a_comma_separated_mechanism_string():
    assert BrokerConfig(sasl_mechanisms="PLAIN, SCRAM-SHA-256").enabled_sasl_mechanisms == ("PLAIN", "SCRAM-SHA-256")


def test_emulator_refuses_an_unknown_mechanism_before_starting():
    from kafkaemu.testing import KafkaEmulator
    emulator = KafkaEmulator(sasl_users={"a": "b"}, sasl_mechanisms="GSSAPI")
    with pytest.raises(ValueError, match="GSSAPI"):
        emulator.start()
    assert emulator.port is None and emulator._loop is None


def test_emulator_refuses_a_missing_certificate(tmp_path):
    from kafkaemu.testing import KafkaEmulator
    with pytest.raises(ValueError, match="cannot read tls_cert .*missing.pem"):
        KafkaEmulator(tls_cert=str(tmp_path / "missing.pem")).start()
