"""A throwaway self-signed certificate for TLS tests, made with the machine's ``openssl``
(the ``cryptography`` package is not a dependency); tests skip when openssl is missing."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def self_signed_certificate(directory: Path) -> tuple[str, str]:
    """(certificate, key) PEM paths for CN=localhost with SANs 127.0.0.1 and localhost."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("TLS tests need the openssl command (the cryptography package is not installed either)")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def client_certificate(directory: Path, subject: str) -> tuple[str, str, str]:
    """(CA certificate, client certificate, client key) PEM paths: a throwaway CA and a client
    certificate it signed for ``subject`` (OpenSSL form, ``/CN=alice/OU=eng``)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("TLS tests need the openssl command (the cryptography package is not installed either)")
    ca, ca_key = directory / "ca.pem", directory / "ca-key.pem"
    cert, key, csr = directory / "client.pem", directory / "client-key.pem", directory / "client.csr"
    run = lambda *args: subprocess.run([openssl, *args], check=True, capture_output=True, timeout=60)  # noqa: E731
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(ca_key),
        "-out", str(ca), "-days", "2", "-subj", "/CN=kafkaemu test CA")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key),
        "-out", str(csr), "-subj", subject)
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-out", str(cert),
        "-days", "2")
    return str(ca), str(cert), str(key)
