"""AlterConfigs (key 33), v0-v2: replaces a topic's whole set of configs (unnamed ones return to
their defaults). See config_changes.py for what is alterable."""
from ..protocol.api_keys import ApiKey
from .config_changes import SET, apply_changes, denied_resource
from .registry import registry


@registry.register(ApiKey.ALTER_CONFIGS, 0, 2)
def alter_configs(ctx, req):
    with ctx.store.topic_changes():   # the topics altered reach the data directory as one write
        return {"responses": [
            denied_resource(ctx, r) or apply_changes(ctx, r, [(c.name, SET, c.value) for c in r.configs], True,
                                                     req.validate_only)
            for r in req.resources]}
