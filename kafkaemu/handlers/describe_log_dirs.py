"""DescribeLogDirs (key 35), v1-v5: each node has one log dir (``log_dir``: the data dir, a
``node-N`` directory of it with several nodes, or a name under ``/kafkaemu-memory`` without one)
holding the partitions it has a replica of, with their sizes in bytes. Null topics: every
partition; otherwise those named that the node holds. Total and usable bytes are not measured
(-1, as a broker that cannot tell). Needs DESCRIBE on the cluster, else the answer is empty with
CLUSTER_AUTHORIZATION_FAILED, as KafkaApis."""
import os

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, authorize_cluster
from .registry import registry

MEMORY_LOG_DIR = "/kafkaemu-memory"


def log_dir(ctx, node_id: int) -> str:
    """The absolute path of the one log dir of a node."""
    base = os.path.abspath(ctx.config.data_dir) if ctx.config.data_dir else MEMORY_LOG_DIR
    return base if len(ctx.placement.node_ids) == 1 else f"{base}/node-{node_id}"


def hosted_partitions(ctx, topic):
    """The partitions of a topic with a replica on the node the request reached."""
    return [p for p in topic.partitions if ctx.node_id in ctx.placement.replicas(p)]


@registry.register(ApiKey.DESCRIBE_LOG_DIRS, 1, 5)
def describe_log_dirs(ctx, req):
    if not authorize_cluster(ctx, DESCRIBE):
        return {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "results": []}
    store = ctx.store
    if req.topics is None:
        wanted = {name: None for name in store.topics}
    else:
        wanted = {}
        for t in req.topics:
            wanted.setdefault(t.topic, set()).update(t.partitions)
    topics = []
    for name, indexes in wanted.items():
        topic = store.get(name)
        if topic is None:
            continue
        parts = [{"partition_index": p.index, "partition_size": p.size_bytes, "offset_lag": 0, "is_future_key": False}
                 for p in hosted_partitions(ctx, topic) if indexes is None or p.index in indexes]
        if parts:
            topics.append({"name": name, "partitions": parts})
    return {"error_code": ErrorCode.NONE, "results": [
        {"error_code": ErrorCode.NONE, "log_dir": log_dir(ctx, ctx.node_id), "topics": topics,
         "total_bytes": -1, "usable_bytes": -1, "is_cordoned": False}]}
