"""The security state a control snapshot keeps: ACLs, SCRAM credentials and delegation tokens.
``capture`` copies it, ``apply`` puts a copy back, ``initial`` is what a broker starts with (no
ACLs, the ``--sasl-user`` seeds, no tokens) for a control reset."""
from __future__ import annotations

import copy


def capture(broker) -> dict:
    authorizer = getattr(broker, "authorizer", None)
    return {"acls": None if authorizer is None else authorizer.acls,
            "scram": broker.credentials.scram_to_json(),
            "tokens": broker.tokens.to_json()}


def initial(broker) -> dict:
    return {"acls": [] if getattr(broker, "authorizer", None) is not None else None,
            "scram": copy.deepcopy(broker.credentials.seed_json), "tokens": []}


def apply(broker, state: dict) -> None:
    authorizer = getattr(broker, "authorizer", None)
    if authorizer is not None and state.get("acls") is not None:
        authorizer.replace(state["acls"])
    broker.credentials.replace_scram_json(state["scram"])
    broker.tokens.replace_json(state["tokens"])
