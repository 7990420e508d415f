"""The server-side TLS context for SSL and SASL_SSL listeners (stdlib ``ssl``)."""
from __future__ import annotations

import ssl

from .config import BrokerConfig


def server_ssl_context(config: BrokerConfig) -> ssl.SSLContext | None:
    """None for plaintext listeners. Client certificates are not requested (Kafka's default
    ssl.client.auth=none)."""
    if not config.tls_cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.tls_cert, config.tls_key, config.tls_key_password)
    return context
