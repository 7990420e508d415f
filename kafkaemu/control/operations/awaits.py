"""Awaits: answer as soon as a group, a lag or an offset reaches what a test waits for."""
from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from ..params import AwaitTimeout, ControlError, bad, boolean, duration_ms, integer, text
from ..table import Cli, P, Py, op
from ..views import GroupSnapshot, high_watermark, state_key
from .base import ControlBase, log

MAX_AWAIT_MS = 3_600_000
POLL_INTERVAL_S = 0.01   # how often pending awaits re-check besides after every reply
GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",  # classic
                "Assigning", "Reconciling")                                                # consumer (KIP-848)


def describe_group(current: dict | None) -> str:
    """A group as an await saw it last, in a few words (a timeout's message says it)."""
    if not current:
        return "nothing seen"
    if current.get("exists") is False:
        return "the group does not exist"
    members = current.get("member_count", current.get("members"))
    return (f"state {current.get('state')}, generation {current.get('generation')}, "
            f"{members} member{'' if members == 1 else 's'}")


def _group_state(name: str, value) -> str:
    if not isinstance(value, str) or state_key(value) not in {state_key(s) for s in GROUP_STATES}:
        raise bad(f"{name} must be a group state ({', '.join(GROUP_STATES)}), got {value!r}")
    return next(s for s in GROUP_STATES if state_key(s) == state_key(value))


def _timeout(name: str, value) -> int:
    ms = duration_ms(name, value)
    if ms > MAX_AWAIT_MS:
        raise bad(f"{name} must be at most {MAX_AWAIT_MS} ms, got {ms}")
    return ms


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


TIMEOUT = P(_timeout, required=True, help="how long to wait (ms, or 30s, 2m, ...); required")
# kafkaemu ctl waits 30 s unless told (--timeout); the Python methods take seconds (timeout=30)
AWAIT_CLI = {"flags": {"timeout_ms": "--timeout"}, "defaults": {"timeout_ms": "30s"}}


class AwaitOps(ControlBase):
    async def _await(self, check: Callable[[], tuple[bool, Any]], timeout_ms: int, what: str,
                     seen: Callable[[Any], str] | None = None) -> dict:
        """Answer as soon as ``check()`` holds (re-checked after every reply the broker sends, after
        every control call, and every 10 ms), or 408 after ``timeout_ms``. ``check`` returns
        (holds, view), the view possibly a callable rendering it; ``seen(view)`` says in the
        timeout's message what was seen last."""
        started = time.perf_counter()
        ok, view = check()
        view = view() if callable(view) else view
        if not ok:
            loop = asyncio.get_running_loop()
            future = loop.create_future()
            entry = (check, future)
            self._waiters.append(entry)
            self.broker.interceptor.on_reply = self._poke
            self._schedule_poll()
            try:
                view = await asyncio.wait_for(asyncio.shield(future), timeout_ms / 1000)
            except asyncio.TimeoutError:
                _, view = check()
                view = view() if callable(view) else view
                now = f"; now: {seen(view)}" if seen is not None else ""
                raise AwaitTimeout(f"timed out after {timeout_ms} ms waiting for {what}{now}",
                                   waited_ms=round((time.perf_counter() - started) * 1000, 1), current=view) from None
            finally:
                if entry in self._waiters:
                    self._waiters.remove(entry)
                if not self._waiters:
                    self.broker.interceptor.on_reply = None
        return {"satisfied": True, "waited_ms": round((time.perf_counter() - started) * 1000, 1), "current": view}

    def _poke(self) -> None:
        """Re-check pending awaits once the current request is done."""
        if self._waiters and not self._poke_scheduled:
            self._poke_scheduled = True
            asyncio.get_running_loop().call_soon(self._check_waiters)

    def _schedule_poll(self) -> None:
        if self._poll_handle is None and self._waiters:
            self._poll_handle = asyncio.get_running_loop().call_later(POLL_INTERVAL_S, self._poll)

    def _poll(self) -> None:
        self._poll_handle = None
        self._check_waiters()
        self._schedule_poll()

    def _check_waiters(self) -> None:
        self._poke_scheduled = False
        for check, future in list(self._waiters):
            if future.done():
                continue
            try:
                ok, view = check()
            except Exception as exc:  # a check must never take the loop down
                log.exception("await_check_failed")
                future.set_exception(ControlError(500, f"await failed: {exc}"))
                continue
            if ok:
                future.set_result(view() if callable(view) else view)

    @op("POST", "/api/await/group", group=P(text, required=True, help="the group id"),
        state=P(_group_state, help="this state (Stable, Empty, ...)"),
        generation=P(integer(min=0), help="at least this generation (group epoch)"),
        members=P(integer(min=0), help="exactly this many members"),
        assigned=P(boolean, default=False, help="Stable with every subscribed partition assigned"),
        timeout_ms=TIMEOUT,
        py=Py("await_group", lambda group, *, state=None, generation=None, members=None, assigned=False, timeout=30:
              {"group": group, "state": state, "generation": generation, "members": members,
               "assigned": assigned or None, "timeout_ms": _ms(timeout)}, result="current",
              doc="Return the group as soon as it is in ``state``, at ``generation`` or later, with ``members`` "
                  "members and (``assigned``) every subscribed partition assigned; ``timeout`` in seconds."),
        cli=Cli("await group", "group", **AWAIT_CLI))
    async def await_group(self, group: str, state: str | None, generation: int | None, members: int | None,
                          assigned: bool, timeout_ms: int) -> dict:
        """Wait until a group is in a state, reaches a generation, has a member count and/or a
        complete assignment (all that are given). A group that does not exist yet is waited for."""
        if state is None and generation is None and members is None and not assigned:
            raise bad("await_group: give state, generation, members and/or assigned")
        wanted = [f"state {state}" if state else "", f"generation >= {generation}" if generation is not None else "",
                  f"{members} members" if members is not None else "", "a complete assignment" if assigned else ""]

        def check():
            g = GroupSnapshot(self.broker, group)
            if not g.exists:
                return False, {"group_id": group, "exists": False}
            ok = ((state is None or state_key(g.state) == state_key(state))
                  and (generation is None or g.generation >= generation)
                  and (members is None or g.member_count == members)
                  and (not assigned or g.fully_assigned()))
            return ok, g.detail   # rendered only when answering
        return await self._await(check, timeout_ms, f"group {group!r}: {', '.join(w for w in wanted if w)}",
                                 describe_group)

    @op("POST", "/api/await/lag", group=P(text, required=True, help="the group id"),
        lag=P(integer(min=0), default=0, help="at most this total lag"),
        topic=P(text, help="count every partition of this topic (default: those committed or assigned)"),
        timeout_ms=TIMEOUT,
        py=Py("await_lag", lambda group, lag=0, *, topic=None, timeout=30:
              {"group": group, "lag": lag, "topic": topic, "timeout_ms": _ms(timeout)}, result="current",
              doc="Return as soon as the group's total lag is at most ``lag``; ``timeout`` in seconds."),
        cli=Cli("await lag", "group", **AWAIT_CLI))
    async def await_lag(self, group: str, lag: int, topic: str | None, timeout_ms: int) -> dict:
        """Wait until a group's total lag is at most ``lag`` (default 0: it has consumed and
        committed everything)."""
        def check():
            g = GroupSnapshot(self.broker, group)
            current = g.lag(topic)
            return current is not None and current <= lag, {"group_id": group, "lag": current,
                                                             "offsets": g.offsets_view()}
        return await self._await(check, timeout_ms, f"group {group!r} to lag at most {lag}"
                                                    + (f" on {topic}" if topic else ""))

    @op("POST", "/api/await/offset", topic=P(text, required=True, help="the topic"),
        partition=P(integer(min=0), required=True, help="the partition"),
        offset=P(integer(min=0), required=True, help="the offset to reach"),
        group=P(text, help="wait for this group's committed offset instead of the high watermark"),
        timeout_ms=TIMEOUT,
        py=Py("await_offset", lambda topic, partition, offset, *, group=None, timeout=30:
              {"topic": topic, "partition": partition, "offset": offset, "group": group,
               "timeout_ms": _ms(timeout)}, result="current",
              doc="Return as soon as the partition's high watermark (or ``group``'s committed offset) is at "
                  "least ``offset``; ``timeout`` in seconds."),
        cli=Cli("await offset", "topic", "partition", "offset", **AWAIT_CLI))
    async def await_offset(self, topic: str, partition: int, offset: int, group: str | None,
                           timeout_ms: int) -> dict:
        """Wait until a partition's high watermark (or a group's committed offset) reaches ``offset``."""
        def check():
            if group is None:
                current = high_watermark(self.broker, topic, partition)
            else:
                committed = self.broker.coordinator.offsets.store.get(group, topic, partition)
                current = committed.offset if committed is not None else None
            return current is not None and current >= offset, {"topic": topic, "partition": partition,
                                                               "group": group, "offset": current}
        what = f"{topic}-{partition} to reach offset {offset}" + (f" committed by {group!r}" if group else "")
        return await self._await(check, timeout_ms, what)
