"""Test controls over a running emulator: the manual clock, member expiry, faults, topology, the
request log, state, awaits and snapshots (docs/control.md).

- ``intercept``: the broker-side hook every request passes (faults, request log, version caps);
- ``operations``: the operations themselves, one implementation for the HTTP API and for
  ``KafkaEmulator`` in-process;
- ``http``: the HTTP/1.1 JSON server on the broker's loop; ``client``: its urllib client;
- ``cli``: ``kafkaemu ctl``.
"""
