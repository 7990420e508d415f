"""AddRaftVoter (key 80), v0-v1: ``kafka-metadata-quorum.sh add-controller``, Admin.addRaftVoter
(KIP-853). A broker forwards it to the controller quorum, whose ControllerApis checks ALTER on
the cluster (CLUSTER_AUTHORIZATION_FAILED, with Errors' message); its leader then answers as
KafkaRaftClient.handleAddVoterRequest and AddVoterHandler (``core/quorum.py``): a cluster id other
than this one's is INCONSISTENT_CLUSTER_ID (none is not checked), a negative voter id or a zero
directory id INVALID_REQUEST, so are listeners without the CONTROLLER one; a static quorum
(kraft.version 0) UNSUPPORTED_VERSION; an id already voting DUPLICATE_VOTER. The new voter must
answer ApiVersions at its CONTROLLER endpoint (a running node's listener) and be a caught-up
observer (a running node, with the directory id DescribeQuorum shows for it), else
REQUEST_TIMED_OUT. Once added it is a voter in DescribeQuorum with the endpoints given. v1's
ack_when_committed changes nothing here: the change commits at once."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import ALTER, authorize_cluster
from .registry import registry


@registry.register(ApiKey.ADD_RAFT_VOTER, 0, 1)
def add_raft_voter(ctx, req):
    if not authorize_cluster(ctx, ALTER):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    endpoints = [(listener.name, listener.host, listener.port) for listener in req.listeners]
    code, message = ctx.quorum.add_voter(req.cluster_id, req.voter_id, req.voter_directory_id, endpoints)
    return _answer(code, message)


def _answer(code: int, message: str | None) -> dict:
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message}
