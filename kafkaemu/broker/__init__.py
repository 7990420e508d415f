"""The broker package: state and lifecycle (``broker.py``), the handler context (``context.py``),
dispatch and request interception (``dispatch.py``, ``intercept.py``), placement of partitions and
coordinators (``placement.py``), the coordinators' construction (``coordinators.py``), topic
administration (``topics.py``), the transaction data path and test hooks (``transactions.py``)."""
from .broker import Broker
from .placement import NO_LEADER

__all__ = ["Broker", "NO_LEADER"]
