"""What the KIP-848 consumer, KIP-932 share and KIP-1071 streams groups share (Kafka's
coordinator.group.modern): the ModernGroup base and the shapes of their topics and assignments
(group.py), their heartbeat answers' common parts (wire.py), the one lifecycle their managers run
(lifecycle.py) and the replay of their records (replay.py)."""
from .group import Assignment, ModernGroup, TopicMeta, assignment_of
from .wire import error_response, wire_assignment

__all__ = ["Assignment", "ModernGroup", "TopicMeta", "assignment_of", "error_response", "wire_assignment"]
