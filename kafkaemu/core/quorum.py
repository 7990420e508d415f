"""The KRaft metadata quorum (``__cluster_metadata``) of the cluster kafkaemu presents: its voters,
leader and epoch, and the voter changes of KIP-853 (AddRaftVoter, RemoveRaftVoter) with the checks
and messages of Kafka's KafkaRaftClient, AddVoterHandler and RemoveVoterHandler.

A new cluster is formatted ``--standalone``: the first node, a combined broker and controller,
is the one voter and the leader at epoch 1. Each node has one metadata log directory, its id
derived from the cluster id and the node id (DescribeQuorum reports it; AddRaftVoter and
RemoveRaftVoter must name it). With ``kraft.version`` 0 (a static ``controller.quorum.voters``
quorum) voters have no directory id and the voter set cannot change (UNSUPPORTED_VERSION).

A voter change commits at once: the leader is caught up and every voter fetches, so what Kafka
answers after the new VotersRecord commits is answered here straight away. Removing the leader
makes it resign as Kafka's leader does once the record commits: the remaining voter with the
lowest id leads at the next epoch. The controllers never stop (the control API stops a node's
broker listener only), so the quorum keeps its majority whatever the brokers do.
"""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Callable

NO_DIRECTORY = bytes(16)
CONTROLLER_LISTENER = "CONTROLLER"

# error codes (Kafka's Errors); the core does not import the protocol layer
NONE, REQUEST_TIMED_OUT, UNSUPPORTED_VERSION, INVALID_REQUEST = 0, 7, 35, 42
INCONSISTENT_CLUSTER_ID, DUPLICATE_VOTER, VOTER_NOT_FOUND = 104, 126, 127


def directory_id(cluster_id: str, node_id: int) -> bytes:
    """The id of a node's metadata log directory (stable for a cluster id, never all zeros)."""
    digest = hashlib.md5(f"{cluster_id}/{node_id}".encode()).digest()
    return digest if digest != NO_DIRECTORY else b"\x01" + digest[1:]


@dataclass(frozen=True)
class Voter:
    node_id: int
    directory_id: bytes
    endpoints: tuple[tuple[str, str, int], ...]   # (listener name, host, port); () the node's own listener


def uuid_text(raw: bytes) -> str:
    """Java's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def replica_key(node_id: int, directory: bytes) -> str:
    """Kafka's ReplicaKey.toString."""
    shown = "Optional.empty" if directory == NO_DIRECTORY else f"Optional[{uuid_text(directory)}]"
    return f"ReplicaKey(id={node_id}, directoryId={shown})"


class MetadataQuorum:
    """The voters, leader and epoch. ``kraft_version`` reads the finalized ``kraft.version`` now;
    ``observer``: whether a node id and directory id are a replica fetching the metadata log
    (a running node of the cluster with that directory), as the leader's observer states know it;
    ``answers_at``: the node listening at a (host, port), None when nothing answers there."""

    def __init__(self, cluster_id: str, leader_id: int, kraft_version: Callable[[], int],
                 observer: Callable[[int, bytes], bool], answers_at: Callable[[str, int], int | None]) -> None:
        self.cluster_id = cluster_id
        self.kraft_version = kraft_version
        self.observer = observer
        self.answers_at = answers_at
        self.first_voter = leader_id
        self.reset()

    def reset(self) -> None:
        """Back to the quorum a new cluster is formatted with: the first node alone, on its own
        listener (no endpoints of its own: the server binds the port)."""
        leader_id = self.first_voter
        self.voters: dict[int, Voter] = {leader_id: Voter(leader_id, directory_id(self.cluster_id, leader_id), ())}
        self.leader_id = leader_id
        self.leader_epoch = 1

    def voter_directory(self, voter: Voter) -> bytes:
        """A voter's directory id as DescribeQuorum reports it: none in a static quorum."""
        return voter.directory_id if self.kraft_version() >= 1 else NO_DIRECTORY

    def _cluster_error(self, cluster_id: str | None) -> tuple[int, str] | None:
        if cluster_id is not None and cluster_id != self.cluster_id:
            return INCONSISTENT_CLUSTER_ID, f'The given id "{cluster_id}" doesn\'t match the cluster id "{self.cluster_id}"'
        return None

    def _keys(self) -> str:
        return "[" + ", ".join(replica_key(v.node_id, self.voter_directory(v))
                               for v in sorted(self.voters.values(), key=lambda v: v.node_id)) + "]"

    def add_voter(self, cluster_id: str | None, node_id: int, directory: bytes,
                  endpoints: list[tuple[str, str, int]]) -> tuple[int, str | None]:
        """KafkaRaftClient.handleAddVoterRequest and AddVoterHandler, in their order."""
        refused = self._cluster_error(cluster_id)
        if refused:
            return refused
        if node_id < 0 or directory == NO_DIRECTORY:
            return INVALID_REQUEST, "Add voter request didn't include a valid voter"
        listeners = {name.upper(): (host, port) for name, host, port in endpoints}
        if CONTROLLER_LISTENER not in listeners:
            shown = ", ".join(f"ListenerName({n})={h}/<unresolved>:{p}" for n, (h, p) in listeners.items())
            return INVALID_REQUEST, (f"Add voter request didn't include the endpoint (Endpoints(endpoints={{{shown}}})) "
                                     f"for the default listener ListenerName({CONTROLLER_LISTENER})")
        level = self.kraft_version()
        if level < 1:
            return UNSUPPORTED_VERSION, f"Cluster doesn't support adding voter because the kraft.version feature is {level}"
        key = replica_key(node_id, directory)
        if node_id in self.voters:
            return DUPLICATE_VOTER, f"The voter id for {key} is already part of the set of voters {self._keys()}."
        # the leader asks the new voter's endpoint for its ApiVersions, then wants it caught up
        if self.answers_at(*listeners[CONTROLLER_LISTENER]) is None:
            return REQUEST_TIMED_OUT, ("Aborted add voter operation for since API_VERSIONS returned an error "
                                       "BROKER_NOT_AVAILABLE")
        if not self.observer(node_id, directory):
            return REQUEST_TIMED_OUT, f"Aborted add voter operation for {key} since it is lagging behind"
        self.voters[node_id] = Voter(node_id, directory, tuple((n.upper(), h, p) for n, h, p in endpoints))
        return NONE, None

    def remove_voter(self, cluster_id: str | None, node_id: int, directory: bytes) -> tuple[int, str | None]:
        """KafkaRaftClient.handleRemoveVoterRequest and RemoveVoterHandler, in their order: the last
        voter, or one whose directory differs, is not found (VoterSet.removeVoter)."""
        refused = self._cluster_error(cluster_id)
        if refused:
            return refused
        if node_id < 0 or directory == NO_DIRECTORY:
            return INVALID_REQUEST, "Remove voter request didn't include a valid voter"
        level = self.kraft_version()
        if level < 1:
            return UNSUPPORTED_VERSION, \
                f"Cluster doesn't support removing voter because the kraft.version feature is {level}"
        voter = self.voters.get(node_id)
        if voter is None or voter.directory_id != directory or len(self.voters) == 1:
            return VOTER_NOT_FOUND, (f"Cannot remove voter {replica_key(node_id, directory)} from the set of "
                                     f"voters {self._keys()}")
        del self.voters[node_id]
        if node_id == self.leader_id:   # the leader resigns; the others elect one at the next epoch
            self.leader_id = min(self.voters)
            self.leader_epoch += 1
        return NONE, None
