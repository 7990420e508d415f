"""KIP-714 client telemetry: CLIENT_METRICS subscriptions (``subscriptions.py``), the client
instances that ask for them and push metrics (``manager.py``, Kafka's ClientMetricsManager), and
the OTLP payloads they push, decoded (``otlp.py``). Pure: time is passed in."""
