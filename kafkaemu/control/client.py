"""A client of the HTTP control API (standard library urllib), used by ``kafkaemu ctl`` and by
``KafkaEmulator`` in subprocess mode: ``ControlClient(url).call("clock_advance", ms=30000)``.

Operations are named as in kafkaemu.control.operations.OPS, whose routes say where each parameter
goes: into the path, the query string (GET) or a JSON body. A refused call raises ControlError
with the server's status and message.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from urllib.parse import quote, urlencode

from .operations import OPS
from .params import BadRequest, ControlError, error_for

# Extra seconds the HTTP read may take beyond an await's own timeout.
AWAIT_MARGIN_S = 10


class ControlClient:
    def __init__(self, url: str, token: str | None = None, timeout: float = 30) -> None:
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("KAFKAEMU_CONTROL_TOKEN")
        self.timeout = timeout

    def call(self, name: str, /, **params):
        spec = OPS.get(name)
        if spec is None:
            raise ControlError(404, f"no control operation {name!r}")
        params = {k: v for k, v in params.items() if v is not None}
        path = spec.path
        for key in spec.path_params:
            if key not in params:
                raise BadRequest(f"{name}: {key} is required")
            path = path.replace("{" + key + "}", quote(str(params.pop(key)), safe=""))
        data = None
        if spec.method == "GET":
            if params:
                path += "?" + urlencode({k: _query_value(v) for k, v in params.items()})
        elif params:
            data = json.dumps(params).encode()
        timeout = self.timeout
        if "timeout_ms" in params:
            from .params import duration_ms
            try:
                timeout = max(timeout, duration_ms("timeout_ms", params["timeout_ms"]) / 1000 + AWAIT_MARGIN_S)
            except ControlError:
                pass  # the server says what is wrong with it
        return self.request(spec.method, path, data, timeout)

    def request(self, method: str, path: str, data: bytes | None = None, timeout: float | None = None):
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"error": raw.decode("utf-8", "replace").strip() or exc.reason}
            details = {k: v for k, v in body.items() if k not in ("error", "status")} if isinstance(body, dict) else {}
            message = body.get("error", str(body)) if isinstance(body, dict) else str(body)
            raise error_for(exc.code, message, **details) from None
        except urllib.error.URLError as exc:
            raise ConnectionError(f"cannot reach the kafkaemu control API at {self.url}: {exc.reason}") from None


def _query_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
