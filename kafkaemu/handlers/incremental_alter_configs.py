"""IncrementalAlterConfigs (key 44), v0-v1: SET, DELETE, APPEND and SUBTRACT (list configs only)
on topic configs. See config_changes.py for what is alterable."""
from ..protocol.api_keys import ApiKey
from .config_changes import apply_changes, denied_resource
from .registry import registry


@registry.register(ApiKey.INCREMENTAL_ALTER_CONFIGS, 0, 1)
def incremental_alter_configs(ctx, req):
    with ctx.store.topic_changes():   # the topics altered reach the data directory as one write
        return {"responses": [
            denied_resource(ctx, r) or apply_changes(ctx, r, [(c.name, c.config_operation, c.value) for c in r.configs],
                                                     False, req.validate_only)
            for r in req.resources]}
