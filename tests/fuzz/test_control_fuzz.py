"""Fuzzing the control API's JSON bodies: any body, for any operation, is answered or refused
with a 4xx (ControlError below 500) — never another exception — and the broker still serves.

Bodies go through the HTTP API's own reader (``control.http.parse_body``) and then the
operation, as a request does; the awaits are left out (a valid one waits for its timeout).
"""
import asyncio
import json
import math

import pytest

pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (pip install kafkaemu[test])")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkaemu.control.http import parse_body  # noqa: E402
from kafkaemu.control.operations import OPS  # noqa: E402
from kafkaemu.control.params import ControlError  # noqa: E402
from kafkaemu.protocol.api_keys import ApiKey  # noqa: E402

from ..control.harness import Env  # noqa: E402
from .test_wire_fuzz import fuzz  # noqa: E402

FUZZED = sorted(name for name in OPS if not name.startswith("await_"))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(), st.text(max_size=30), st.sampled_from(["30s", "-5s", "1e400s", "Heartbeat", "t",
                                                                         "NOT_COORDINATOR", "9" * 30, "", "Stable"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=3), max_leaves=12)


@st.composite
def bodies(draw):
    name = draw(st.sampled_from(FUZZED))
    keys = list(OPS[name].params) + ["typo"]
    body = draw(st.dictionaries(st.sampled_from(keys), values, max_size=len(keys)))
    raw = json.dumps(body, allow_nan=True).encode()
    if draw(st.booleans()):   # deeper nesting, or raw text that is not JSON
        raw = draw(st.sampled_from([b"[" * 5000 + b"]" * 5000, b'{"ms": ' + b"[" * 50 + b"]" * 50 + b"}",
                                    b"{", b'{"a": NaN}', b'{"ms": 1e999}', raw]))
    return name, raw


ENV = Env(nodes=2)
ENV.broker.topics.create("t", 2, {})


@fuzz(150)
@given(bodies())
def test_any_body_is_answered_or_refused_with_a_4xx(case):
    name, raw = case
    try:
        params = parse_body(raw)
        result = ENV.control.run(name, params)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        json.dumps(result, allow_nan=False)   # what the HTTP API sends must be JSON
    except ControlError as exc:
        assert exc.status < 500, exc.body()
    assert math.isfinite(ENV.clock.now_ms())
    assert ENV.client().call(ApiKey.API_VERSIONS, 0, {}).error_code == 0   # ApiVersions still answered
