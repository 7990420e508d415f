"""``kafkaemu ctl``'s human-readable output of each operation's answer (``--json`` prints the
answer itself)."""
from __future__ import annotations

import json
import time


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
        return table([[n["node_id"], f"{n['host']}:{n['port']}", "yes" if n["running"] else "no",
                       "yes" if n["registered"] else "no", "yes" if n["voter"] else "no", n["leader_of"],
                       n["offsets_partitions"]] for n in r["nodes"]],
                     ["NODE", "ADDRESS", "RUNNING", "REGISTERED", "VOTER", "LEADS", "OFFSETS-PARTITIONS"])
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
    if op.startswith("transaction") and "state" in r:
        parts = ", ".join(f"{p['topic']}-{p['partition']}" for p in r.get("partitions", [])) or "none"
        head = f"{r['error']}: " if r.get("error") not in (None, "NONE") else ""
        return (f"{head}transaction {r['transactional_id']}: {r['state']}"
                + (f" (pending {r['pending_state']})" if r.get("pending_state") else "")
                + f", producer {r['producer_id']} epoch {r['producer_epoch']}, partitions {parts}"
                + (", markers held" if r.get("held") else "")
                + (f"; completed {r['completed']}" if "completed" in r else ""))
    if op == "leader_move":
        return f"{r['topic']}-{r['partition']}: leader {r['leader']}, epoch {r['leader_epoch']}"
    if op == "schema_subjects":
        head = (f"{r['schemas']} schema(s), max id {r['max_id']}, compatibility {r['compatibility']}, "
                f"mode {r['mode']}")
        rows = [[s["subject"], ",".join(str(v["version"]) for v in s["versions"]) or "-",
                 ",".join(str(v["id"]) for v in s["versions"]) or "-",
                 ",".join(sorted({v["schema_type"] for v in s["versions"]})) or "-",
                 s["compatibility"], s["mode"], "yes" if s["deleted"] else "no"] for s in r["subjects"]]
        return head + "\n\n" + table(rows, ["SUBJECT", "VERSIONS", "IDS", "TYPE", "COMPATIBILITY", "MODE", "DELETED"])
    if op in ("client_quotas", "client_quota_set", "client_quota_remove"):
        quotas = r["quotas"] if op == "client_quotas" else [r]
        out = table([[" ".join(f"{k}={v}" for k, v in q["entity"].items()),
                      " ".join(f"{k}={v:g}" for k, v in q["values"].items()) or "(removed)"] for q in quotas],
                    ["ENTITY", "QUOTAS"])
        if op == "client_quotas":
            rows = [[kind, c["node"], c["user"], c["client_id"], f"{c['rate']:g}",
                     "-" if c["bound"] is None else f"{c['bound']:g}", c["throttled_responses"]]
                    for kind, clients in r["clients"].items() for c in clients]
            out += "\n\n" + table(rows, ["KIND", "NODE", "USER", "CLIENT", "RATE", "BOUND", "THROTTLED"])
        return out
    if op == "telemetry":
        subs = table([[s["name"], " ".join(f"{k}={v}" for k, v in s["configs"].items())] for s in r["subscriptions"]],
                     ["SUBSCRIPTION", "CONFIGS"])
        rows = [[c.get("client_id") or "-", c.get("client_instance_id"), c.get("client_software_name"),
                 c.get("pushes"), m["name"] + ("{" + ",".join(f"{k}={v}" for k, v in sorted(m["attributes"].items()))
                                                + "}" if m["attributes"] else ""), m["value"]]
                for c in r["clients"] for m in c.get("metrics", [])]
        return subs + "\n\n" + table(rows, ["CLIENT", "INSTANCE", "SOFTWARE", "PUSHES", "METRIC", "VALUE"])
    if op == "state":
        sections = [render("clock_get", r["clock"]), render("nodes", {"nodes": r["nodes"]}),
                    render("topics", {"topics": r["topics"]}), render("groups", {"groups": r["groups"]})]
        if r.get("faults"):
            sections.append(render("faults", {"faults": r["faults"]}))
        if r.get("api_version_caps"):
            sections.append(table([[c["api"], c["api_key"], c["max_version"]] for c in r["api_version_caps"]],
                                  ["CAPPED-API", "KEY", "MAX"]))
        if r.get("snapshots"):
            sections.append(render("snapshot_list", {"snapshots": r["snapshots"]}))
        sections.append(render("request_log_config", r["request_log"]) + f"; journal next seq {r['journal_next_seq']}")
        return "\n\n".join(sections)
    if op == "schema_subject_names":
        return "\n".join(r)
    return json.dumps(r, indent=2)
