"""``kafkaemu ctl``: the control API from a shell, human-readable by default, ``--json`` for scripts.

    kafkaemu ctl --url http://127.0.0.1:9644 clock advance 30s
    export KAFKAEMU_CONTROL_URL=http://127.0.0.1:9644
    kafkaemu ctl fault add --api Heartbeat --error NOT_COORDINATOR --count 3
    kafkaemu ctl await group G --state Stable --members 3 --timeout 30s
    kafkaemu ctl snapshot save NAME

Exit status: 0 done, 1 refused by the emulator (an await that timed out too) or unreachable,
2 bad usage.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from .client import ControlClient
from .params import ControlError


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kafkaemu ctl", description="Drive a running kafkaemu through its control API "
                                "(kafkaemu serve --control-port N prints its URL).")
    p.add_argument("--url", help="the control API's URL (default: $KAFKAEMU_CONTROL_URL, else --port)")
    p.add_argument("--port", type=int, help="the control port on 127.0.0.1")
    p.add_argument("--token", help="bearer token (default: $KAFKAEMU_CONTROL_TOKEN)")
    p.add_argument("--json", action="store_true", help="print the API's JSON answer")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    sub.add_parser("state", help="everything at once")

    clock = sub.add_parser("clock", help="show, advance or set the clock")
    clock_sub = clock.add_subparsers(dest="action")
    clock_sub.add_parser("show")
    adv = clock_sub.add_parser("advance", help="move the manual clock forward")
    adv.add_argument("duration", help="ms, or 250ms, 30s, 5m, 1h30m")
    st = clock_sub.add_parser("set", help="set the manual clock to a later time")
    st.add_argument("time", help="ms since the epoch or ISO 8601 (2030-01-01T00:00:00Z)")

    exp = sub.add_parser("expire", help="expire one member's session now")
    exp.add_argument("group")
    who = exp.add_mutually_exclusive_group(required=True)
    who.add_argument("--member-id")
    who.add_argument("--instance-id")
    who.add_argument("--client-id")

    fault = sub.add_parser("fault", help="add, list, remove or clear fault rules")
    fault_sub = fault.add_subparsers(dest="action", required=True)
    add = fault_sub.add_parser("add")
    add.add_argument("--api", required=True, help="API name (Heartbeat) or key")
    add.add_argument("--error", help="error name (NOT_COORDINATOR) or code")
    add.add_argument("--delay", help="answer later (ms, 5s, ...)")
    add.add_argument("--drop-connection", action="store_true")
    add.add_argument("--black-hole", action="store_true", help="never answer")
    count = add.add_mutually_exclusive_group()
    count.add_argument("--count", type=int, help="requests it fails (default 1)")
    count.add_argument("--until-removed", action="store_true")
    add.add_argument("--client-id")
    add.add_argument("--min-version", type=int)
    add.add_argument("--max-version", type=int)
    add.add_argument("--node", type=int)
    add.add_argument("--topic")
    add.add_argument("--partition", type=int)
    fault_sub.add_parser("list")
    rm = fault_sub.add_parser("remove")
    rm.add_argument("id", type=int)
    fault_sub.add_parser("clear")
    sub.add_parser("faults", help="list fault rules")

    sub.add_parser("nodes", help="list nodes")
    node = sub.add_parser("node", help="stop or start a node")
    node_sub = node.add_subparsers(dest="action", required=True)
    stop = node_sub.add_parser("stop")
    stop.add_argument("node", type=int)
    stop.add_argument("--offline", action="store_true", help="leave its partitions without a leader")
    start = node_sub.add_parser("start")
    start.add_argument("node", type=int)
    start.add_argument("--keep-leaders", action="store_true", help="do not move its partitions back")

    leader = sub.add_parser("leader", help="move a partition's leader")
    leader.add_argument("action", choices=["move"])
    leader.add_argument("topic")
    leader.add_argument("partition", type=int)
    leader.add_argument("node", type=int)
    coord = sub.add_parser("coordinator", help="move a group's coordinator")
    coord.add_argument("action", choices=["move"])
    coord.add_argument("group")
    coord.add_argument("node", type=int)

    av = sub.add_parser("api-versions", help="cap the versions ApiVersions advertises")
    av_sub = av.add_subparsers(dest="action")
    av_sub.add_parser("list")
    cap = av_sub.add_parser("cap")
    cap.add_argument("api")
    cap.add_argument("max_version", type=int)
    uncap = av_sub.add_parser("uncap")
    uncap.add_argument("api")
    av_sub.add_parser("clear")

    req = sub.add_parser("requests", help="the request log")
    req_sub = req.add_subparsers(dest="action")
    on = req_sub.add_parser("on")
    on.add_argument("--bodies", action="store_true", help="keep the decoded requests and responses")
    on.add_argument("--capacity", type=int)
    req_sub.add_parser("off")
    req_sub.add_parser("clear")
    ls = req_sub.add_parser("list")
    for target in (req, ls):
        target.add_argument("--after", type=int)
        target.add_argument("--limit", type=int)
        target.add_argument("--last", type=int)
        target.add_argument("--api")
        target.add_argument("--client-id")
        target.add_argument("--node", type=int)
        target.add_argument("--errors", action="store_true")
        target.add_argument("--follow", action="store_true", help="keep printing new entries")

    topics = sub.add_parser("topics", help="topics with partition offsets")
    topics.add_argument("--internal", action="store_true")
    topic = sub.add_parser("topic", help="one topic")
    topic.add_argument("name")
    ct = sub.add_parser("create-topic", help="create a topic")
    ct.add_argument("name")
    ct.add_argument("--partitions", type=int, default=1)
    ct.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")
    dt = sub.add_parser("delete-topic", help="delete a topic")
    dt.add_argument("name")
    sub.add_parser("groups", help="groups with state and lag")
    group = sub.add_parser("group", help="one group: members, assignments, offsets, lag")
    group.add_argument("group")
    journal = sub.add_parser("journal", help="group state transitions")
    journal.add_argument("--group")
    journal.add_argument("--after", type=int)

    aw = sub.add_parser("await", help="wait for a condition")
    aw_sub = aw.add_subparsers(dest="action", required=True)
    ag = aw_sub.add_parser("group")
    ag.add_argument("group")
    ag.add_argument("--state")
    ag.add_argument("--generation", type=int)
    ag.add_argument("--members", type=int)
    ag.add_argument("--assigned", action="store_true", help="every subscribed partition assigned")
    al = aw_sub.add_parser("lag")
    al.add_argument("group")
    al.add_argument("--lag", type=int, default=0)
    al.add_argument("--topic")
    ao = aw_sub.add_parser("offset")
    ao.add_argument("topic")
    ao.add_argument("partition", type=int)
    ao.add_argument("offset", type=int)
    ao.add_argument("--group", help="the group's committed offset instead of the high watermark")
    for target in (ag, al, ao):
        target.add_argument("--timeout", default="30s", help="default 30s")

    snap = sub.add_parser("snapshot", help="save, restore, list or delete snapshots")
    snap_sub = snap.add_subparsers(dest="action", required=True)
    for action in ("save", "restore", "delete"):
        snap_sub.add_parser(action).add_argument("name")
    snap_sub.add_parser("list")
    sub.add_parser("reset", help="back to an empty broker")
    return p


def call_for(args) -> tuple[str, dict]:
    """The operation and parameters a command line stands for."""
    cmd, action = args.cmd, getattr(args, "action", None)
    if cmd == "state":
        return "state", {}
    if cmd == "clock":
        if action == "advance":
            return "clock_advance", {"ms": args.duration}
        if action == "set":
            return "clock_set", {"now_ms": args.time}
        return "clock_get", {}
    if cmd == "expire":
        return "expire_member", {"group": args.group, "member_id": args.member_id, "instance_id": args.instance_id,
                                 "client_id": args.client_id}
    if cmd == "faults" or (cmd == "fault" and action == "list"):
        return "faults", {}
    if cmd == "fault":
        if action == "remove":
            return "fault_remove", {"id": args.id}
        if action == "clear":
            return "faults_clear", {}
        return "fault_add", {"api": args.api, "error": args.error, "delay_ms": args.delay,
                             "drop_connection": args.drop_connection or None, "black_hole": args.black_hole or None,
                             "count": args.count, "until_removed": args.until_removed or None,
                             "client_id": args.client_id, "min_version": args.min_version,
                             "max_version": args.max_version, "node": args.node, "topic": args.topic,
                             "partition": args.partition}
    if cmd == "nodes":
        return "nodes", {}
    if cmd == "node":
        if action == "stop":
            return "node_stop", {"node": args.node, "leaders": "offline" if args.offline else "move"}
        return "node_start", {"node": args.node, "restore_leaders": not args.keep_leaders}
    if cmd == "leader":
        return "leader_move", {"topic": args.topic, "partition": args.partition, "node": args.node}
    if cmd == "coordinator":
        return "coordinator_move", {"group": args.group, "node": args.node}
    if cmd == "api-versions":
        if action == "cap":
            return "api_version_cap", {"api": args.api, "max_version": args.max_version}
        if action == "uncap":
            return "api_version_uncap", {"api": args.api}
        if action == "clear":
            return "api_version_caps_clear", {}
        return "api_version_caps", {}
    if cmd == "requests":
        if action == "on":
            return "request_log_config", {"enabled": True, "bodies": args.bodies, "capacity": args.capacity}
        if action == "off":
            return "request_log_config", {"enabled": False}
        if action == "clear":
            return "requests_clear", {}
        return "requests", {"after": args.after, "limit": args.limit, "last": args.last, "api": args.api,
                            "client_id": args.client_id, "node": args.node, "errors": args.errors or None}
    if cmd == "topics":
        return "topics", {"internal": args.internal or None}
    if cmd == "topic":
        return "topic", {"topic": args.name}
    if cmd == "create-topic":
        configs = dict(c.split("=", 1) for c in args.config if "=" in c) or None
        return "topic_create", {"name": args.name, "partitions": args.partitions, "configs": configs}
    if cmd == "delete-topic":
        return "topic_delete", {"topic": args.name}
    if cmd == "groups":
        return "groups", {}
    if cmd == "group":
        return "group", {"group": args.group}
    if cmd == "journal":
        return "journal_get", {"group": args.group, "after": args.after}
    if cmd == "await":
        if action == "group":
            return "await_group", {"group": args.group, "state": args.state, "generation": args.generation,
                                   "members": args.members, "assigned": args.assigned or None,
                                   "timeout_ms": args.timeout}
        if action == "lag":
            return "await_lag", {"group": args.group, "lag": args.lag, "topic": args.topic,
                                 "timeout_ms": args.timeout}
        return "await_offset", {"topic": args.topic, "partition": args.partition, "offset": args.offset,
                                "group": args.group, "timeout_ms": args.timeout}
    if cmd == "snapshot":
        return {"save": "snapshot_save", "restore": "snapshot_restore", "delete": "snapshot_delete",
                "list": "snapshot_list"}[action], ({} if action == "list" else {"name": args.name})
    return "reset", {}


# -- human-readable output ------------------------------------------------------------------
def table(rows: list[list], header: list[str]) -> str:
    cells = [header] + [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)


def _assignment(parts) -> str:
    if parts is None:
        return "(not a consumer assignment)"
    return " ".join(f"{a['topic']}:{','.join(map(str, a['partitions']))}" for a in parts) or "-"


def _when(ms: int) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ms / 1000)) + f".{ms % 1000:03d}"


def render(op: str, r) -> str:
    if op in ("clock_get", "clock_advance", "clock_set"):
        return f"{r['iso']} ({r['now_ms']} ms, {'manual' if r['manual'] else 'system'} clock)"
    if op == "groups":
        return table([[g["group_id"], g["type"], g["state"], g["generation"], g["members"], g["coordinator"],
                       g["lag"]] for g in r["groups"]], ["GROUP", "TYPE", "STATE", "GEN", "MEMBERS", "COORD", "LAG"])
    if op in ("group",) or op.startswith("await_group"):
        g = r.get("current", r)
        if not g.get("exists", True):
            return f"group {g['group_id']} does not exist"
        head = (f"group {g['group_id']} ({g['type']}): {g['state']}, generation {g['generation']}, "
                f"{g['member_count']} member(s), coordinator {g['coordinator']}, lag {g['lag']}")
        if "waited_ms" in r:
            head = f"satisfied after {r['waited_ms']} ms: " + head
        members = table([[m["member_id"], m["client_id"], m["instance_id"], _assignment(m["assignment"])]
                         for m in g["members"]], ["MEMBER", "CLIENT", "INSTANCE", "ASSIGNMENT"])
        offsets = table([[o["topic"], o["partition"], o["committed_offset"], o["high_watermark"], o["lag"]]
                         for o in g["offsets"]], ["TOPIC", "PARTITION", "COMMITTED", "HIGH-WATERMARK", "LAG"])
        return f"{head}\n\n{members}\n\n{offsets}"
    if op in ("topics", "topic", "topic_create", "topic_delete"):
        topics = r["topics"] if op == "topics" else [r]
        return table([[t["name"], p["partition"], p["leader"], p["leader_epoch"], p["log_start_offset"],
                       p["high_watermark"], p["last_stable_offset"]] for t in topics for p in t["partitions"]],
                     ["TOPIC", "PARTITION", "LEADER", "EPOCH", "LOG-START", "HIGH-WATERMARK", "LSO"])
    if op in ("faults", "faults_clear", "fault_add", "fault_remove"):
        rules = r.get("faults", r.get("removed", [r] if "id" in r else []))
        rows = []
        for f in rules:
            effect = " ".join(x for x in [f["error"] or "", f"delay {f['delay_ms']}ms" if f["delay_ms"] else "",
                                          "drop" if f["drop_connection"] else "",
                                          "black-hole" if f["black_hole"] else ""] if x)
            scope = " ".join(f"{k}={f[k]}" for k in ("client_id", "min_version", "max_version", "node", "topic",
                                                     "partition") if f[k] is not None)
            rows.append([f["id"], f["api"], effect, scope or "-", "until removed" if f["count"] is None else f["count"],
                         f["fired"], "yes" if f["active"] else "no"])
        prefix = "removed:\n" if op == "faults_clear" else ""
        return prefix + table(rows, ["ID", "API", "EFFECT", "SCOPE", "COUNT", "FIRED", "ACTIVE"])
    if op == "nodes":
        return table([[n["node_id"], f"{n['host']}:{n['port']}", "yes" if n["running"] else "no", n["leader_of"],
                       n["offsets_partitions"]] for n in r["nodes"]],
                     ["NODE", "ADDRESS", "RUNNING", "LEADS", "OFFSETS-PARTITIONS"])
    if op == "requests":
        rows = [[e["seq"], _when(e["time_ms"]), e["node"], e["connection"], e["client_id"], e["api"],
                 e["version"], e["correlation_id"], e["latency_ms"], ",".join(e["error_codes"]) or "-",
                 e["outcome"]] for e in r["entries"]]
        return table(rows, ["SEQ", "TIME", "NODE", "CONN", "CLIENT", "API", "V", "CORR", "MS", "ERRORS", "OUTCOME"])
    if op == "journal_get":
        return table([[e["seq"], _when(e["at_ms"]), e["group"], f"{e['from']} -> {e['to']}", e["generation"]]
                      for e in r["entries"]], ["SEQ", "TIME", "GROUP", "TRANSITION", "GEN"])
    if op == "snapshot_list":
        return table([[s["name"], s["topics"], s["partitions"], s["records"], s["bytes"]] for s in r["snapshots"]],
                     ["NAME", "TOPICS", "PARTITIONS", "RECORDS", "BYTES"])
    if op == "api_version_caps":
        return table([[a["api"], a["api_key"], a["min_version"], a["max_version"], a["advertised_max"]]
                      for a in r["apis"]], ["API", "KEY", "MIN", "MAX", "ADVERTISED-MAX"])
    if op in ("await_lag", "await_offset"):
        current = dict(r["current"])
        current.pop("offsets", None)
        return f"satisfied after {r['waited_ms']} ms: " + ", ".join(f"{k} {v}" for k, v in current.items()
                                                                     if v is not None)
    if op in ("request_log_config", "requests_clear"):
        return (f"request log {'on' if r['enabled'] else 'off'} (bodies {'kept' if r['bodies'] else 'not kept'}), "
                f"{r['size']} of {r['capacity']} entries, next seq {r['next_seq']}")
    if op == "expire_member":
        return f"expired {', '.join(r['expired']) or 'nobody'} in {r['group']}: now {r['state']}, generation " \
               f"{r['generation']}" + (f"; failed: {r['failed']}" if r["failed"] else "")
    if op in ("node_stop", "node_start"):
        changes = r.get("moved", []) + r.get("returned", [])
        coordinators = [m for m in changes if m["topic"] == "__consumer_offsets"]
        moved = ", ".join([f"{m['topic']}-{m['partition']} to {m['leader']}" for m in changes if m not in coordinators]
                          + ([f"{len(coordinators)} __consumer_offsets partitions (group coordinators)"]
                             if coordinators else []))
        out = f"node {r['node']} {'running' if r['running'] else 'stopped'}"
        if moved:
            out += f"; leaders moved: {moved}"
        if r.get("offline"):
            out += f"; {len(r['offline'])} partitions offline"
        return out
    if op in ("snapshot_save", "snapshot_delete"):
        return (f"snapshot {r['name']}: {r['topics']} topics, {r['partitions']} partitions, {r['records']} records, "
                f"{r['bytes']} bytes" + (f" ({r['took_ms']} ms)" if "took_ms" in r else ""))
    if op in ("snapshot_restore", "reset"):
        return (f"{'restored ' + r['name'] if op == 'snapshot_restore' else 'reset'} in {r['took_ms']} ms, "
                f"{r['connections_closed']} connections closed")
    return json.dumps(r, indent=2)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    url = args.url or os.environ.get("KAFKAEMU_CONTROL_URL") or (f"http://127.0.0.1:{args.port}" if args.port else None)
    if not url:
        print("kafkaemu ctl: give --url or --port, or set KAFKAEMU_CONTROL_URL (kafkaemu serve --control-port N "
              "prints the URL)", file=sys.stderr)
        return 2
    client = ControlClient(url, args.token)
    op, params = call_for(args)
    try:
        result = client.call(op, **params)
        print(json.dumps(result, indent=2) if args.json else render(op, result), flush=True)
        if op == "requests" and getattr(args, "follow", False):
            follow(client, params, result, args.json)
    except ControlError as exc:
        if args.json:
            print(json.dumps(exc.body(), indent=2))
        print(f"kafkaemu ctl: {exc.message} (HTTP {exc.status})", file=sys.stderr)
        return 1
    except (ConnectionError, OSError) as exc:
        print(f"kafkaemu ctl: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def follow(client: ControlClient, params: dict, result: dict, as_json: bool) -> None:
    params = dict(params, last=None)
    after = result["next_seq"] - 1
    while True:
        time.sleep(0.5)
        result = client.call("requests", **dict(params, after=after))
        if result["entries"]:
            if as_json:
                for e in result["entries"]:
                    print(json.dumps(e), flush=True)
            else:
                print(render("requests", result).split("\n", 1)[1], flush=True)
            after = result["entries"][-1]["seq"]
