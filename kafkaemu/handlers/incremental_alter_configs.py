"""IncrementalAlterConfigs (key 44), v0-v1: SET, DELETE, APPEND and SUBTRACT (list configs only)
on topic configs. See config_changes.py for what is alterable."""
from .config_changes import apply_changes
from .registry import handler


@handler(44, 0, 1)
def incremental_alter_configs(ctx, req):
    return {"responses": [
        apply_changes(ctx.broker, r, [(c.name, c.config_operation, c.value) for c in r.configs], False,
                      req.validate_only)
        for r in req.resources]}
