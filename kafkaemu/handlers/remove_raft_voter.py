"""RemoveRaftVoter (key 81), v0: ``kafka-metadata-quorum.sh remove-controller``,
Admin.removeRaftVoter (KIP-853). A broker forwards it to the controller quorum, whose
ControllerApis checks ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED); its leader answers as
KafkaRaftClient.handleRemoveVoterRequest and RemoveVoterHandler (``core/quorum.py``):
INCONSISTENT_CLUSTER_ID for another cluster's id, INVALID_REQUEST for a negative voter id or a
zero directory id, UNSUPPORTED_VERSION in a static quorum (kraft.version 0), VOTER_NOT_FOUND for
an id that does not vote, a directory id other than the voter's, or the last voter. Removing the
leader makes another voter lead at the next epoch (DescribeQuorum shows it)."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import ALTER, authorize_cluster
from .registry import registry


@registry.register(ApiKey.REMOVE_RAFT_VOTER, 0, 0)
def remove_raft_voter(ctx, req):
    if not authorize_cluster(ctx, ALTER):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    code, message = ctx.quorum.remove_voter(req.cluster_id, req.voter_id, req.voter_directory_id)
    return _answer(code, message)


def _answer(code: int, message: str | None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message}
