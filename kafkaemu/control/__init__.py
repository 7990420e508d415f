"""Test controls over a running emulator: the manual clock, member expiry, faults, topology, the
request log, state, awaits and snapshots (docs/control.md).

- ``table``: how an operation is declared (``@op`` with its route, parameters, ``Py`` method and
  ``Cli`` command); ``operations``: the operations, one module per concern;
- made from the table: ``http`` (aiohttp's server on the broker's loop, checks in ``kafkaemu.http_guard``),
  ``python_api`` (``KafkaEmulator``'s methods), ``cli`` (``kafkaemu ctl``, output in ``render``);
- ``journal``: the group transitions, recorded from the start (the rest is built on first use);
- ``client``: the urllib client of the HTTP API; ``snapshots``, ``views``, ``web``: what operations
  and the page read. The hook every request passes (faults, request log, version caps), which
  these operations configure, is the broker's: ``kafkaemu.broker.intercept``.
"""
