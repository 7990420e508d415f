"""The broker's authorizer built from its settings: None while authorization is off; with a data
directory, the ACLs a previous run stored and every change written back. The SASL users and the
delegation tokens likewise. Each part's modules are imported when it is built (the broker builds
the users and tokens on first use)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from . import json_file

if TYPE_CHECKING:
    from .authorizer import Authorizer
    from .credentials import CredentialStore
    from .tokens import DelegationTokens

SCRAM_FILE = "scram-credentials.json"
TOKENS_FILE = "delegation-tokens.json"


def new_authorizer(config) -> Authorizer | None:
    if not config.authorization_enabled:
        return None
    from . import acl_file
    from .authorizer import Authorizer, parse_super_users
    authorizer = Authorizer(parse_super_users(config.super_users or ""), config.allow_everyone_if_no_acl_found)
    if config.data_dir:
        authorizer.replace(acl_file.load(config.data_dir))
        authorizer.on_change = lambda acls: acl_file.save(config.data_dir, acls)
    return authorizer


def new_credentials(config) -> CredentialStore:
    """The users: seeded from --sasl-user; with a data directory, SCRAM credentials a previous run
    stored (they win over a seed of the same user) and every change written back."""
    from .credentials import CredentialStore
    store = CredentialStore(config.sasl_users, config.enabled_sasl_mechanisms)
    if config.data_dir:
        store.on_change = _kept_in(config.data_dir, SCRAM_FILE, store.load_scram_json, store.scram_to_json)
    return store


def new_tokens(config, now_ms) -> DelegationTokens:
    """Delegation tokens (off without delegation.token.secret.key); with a data directory, those a
    previous run issued and every change written back."""
    from .tokens import DelegationTokens
    tokens = DelegationTokens(config.delegation_token_secret_key, config.delegation_token_max_lifetime_ms,
                              config.delegation_token_expiry_time_ms, now_ms)
    if config.data_dir:
        tokens.on_change = _kept_in(config.data_dir, TOKENS_FILE, tokens.load_json, tokens.to_json)
    return tokens


def _kept_in(data_dir: str, name: str, load: Callable[[object], None],
             dump: Callable[[], object]) -> Callable[[], None]:
    """Gives ``load`` what ``<data dir>/<name>`` holds (nothing when there is no file) and returns
    the on-change callback writing ``dump()`` back to it."""
    import json   # (with a data dir only)
    path = os.path.join(data_dir, name)
    try:
        with open(path, encoding="utf-8") as f:
            load(json.load(f))
    except FileNotFoundError:
        pass
    return lambda: json_file.write(path, dump())
