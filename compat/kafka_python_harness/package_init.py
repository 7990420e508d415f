"""Added by kafkaemu's compat run as ``test/__init__.py``: kafka-python's sdist ships its
``test/integration`` suite without the ``test`` package's ``__init__`` (and without
``test/service.py``), so ``test`` would otherwise be Python's own regression-test package. As in
kafka-python's repository, a callback or errback that raises fails the test instead of being logged."""
from kafka.future import Future

Future.error_on_callbacks = True
