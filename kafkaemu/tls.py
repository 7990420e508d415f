"""The server-side TLS context for SSL and SASL_SSL listeners (stdlib ``ssl``)."""
from __future__ import annotations

import ssl


def server_ssl_context(cert: str | None, key: str | None = None, key_password: str | None = None,
                       client_auth: str = "none", ca: str | None = None) -> ssl.SSLContext | None:
    """The context of ``BrokerConfig``'s ``tls_cert``, ``tls_key`` and ``tls_key_password``; None for
    plaintext listeners (no certificate). Client certificates are requested or required with
    ``client_auth`` (ssl.client.auth) and checked against the PEM CA file ``ca``; by default not
    (Kafka's ssl.client.auth=none). A certificate, key or CA file that does not load is a
    ValueError naming the files."""
    if not cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        # An encrypted key without a password: fail, rather than OpenSSL asking on the terminal.
        password = key_password if key_password is not None else (lambda: b"")
        context.load_cert_chain(cert, key, password)
    except (OSError, ssl.SSLError) as exc:  # ssl.SSLError is an OSError; its text is OpenSSL's
        files = cert + (f" and key {key}" if key else "")
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        raise ValueError(f"cannot load TLS certificate {files}: {reason} "
                         "(PEM certificate chain, unencrypted key or the right password?)") from None
    if client_auth != "none" and ca:
        try:
            context.load_verify_locations(ca)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"cannot load TLS CA certificates {ca}: "
                             f"{getattr(exc, 'reason', None) or exc.strerror or exc}") from None
        context.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
    return context
