"""Added by kafkaemu's compat run as ``test/service.py``, the module kafka-python's integration
fixtures import and its sdist does not ship. The compat run gives the suite a running broker
(``KAFKA_URI``), for which the fixtures use ``ExternalService``; ``SpawnedService`` would run a JVM
broker, which the run has none of (the tests that need one are left out, docs/compat.md)."""
import logging

__all__ = ["ExternalService", "SpawnedService"]

log = logging.getLogger(__name__)


class ExternalService:
    """A broker someone else runs: nothing to start, stop or read logs from."""

    def __init__(self, host, port):
        log.info("Using already running service at %s:%d", host, port)
        self.host = host
        self.port = port

    def open(self):
        pass

    def close(self):
        pass

    def dump_logs(self):
        pass

    def wait_for(self, pattern, timeout=30):
        return True


class SpawnedService:
    def __init__(self, args=None, env=None):
        raise RuntimeError("this fixture starts a JVM broker (%s); kafkaemu's compat run serves the suite "
                           "from one running kafkaemu (KAFKA_URI) and has no JVM broker" % " ".join(args or ()))
