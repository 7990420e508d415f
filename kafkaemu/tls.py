"""The server-side TLS context for SSL and SASL_SSL listeners (stdlib ``ssl``)."""
from __future__ import annotations

import ssl

from .config import BrokerConfig


def server_ssl_context(config: BrokerConfig) -> ssl.SSLContext | None:
    """None for plaintext listeners. Client certificates are not requested (Kafka's default
    ssl.client.auth=none). A certificate or key that does not load is a ValueError naming the files."""
    if not config.tls_cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        # An encrypted key without a password: fail, rather than OpenSSL asking on the terminal.
        password = config.tls_key_password if config.tls_key_password is not None else (lambda: b"")
        context.load_cert_chain(config.tls_cert, config.tls_key, password)
    except (OSError, ssl.SSLError) as exc:  # ssl.SSLError is an OSError; its text is OpenSSL's
        files = config.tls_cert + (f" and key {config.tls_key}" if config.tls_key else "")
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        raise ValueError(f"cannot load TLS certificate {files}: {reason} "
                         "(PEM certificate chain, unencrypted key or the right password?)") from None
    return context
