"""The control port's web page (``GET /``): topics and partitions, groups with their members and
which member holds which partition, lag per partition, a rebalance timeline drawn from the
transition journal, and the request log with filters.

One renderer, on the server: the page is complete HTML, the timeline an inline SVG, so it reads
without JavaScript (it then reloads itself every few seconds). ``ui/page.js`` fetches the same URL
every second and swaps in the parts marked ``data-live`` that changed; ``ui/`` holds the script,
the style sheet and the icon, served under ``/ui/`` (nothing is fetched from elsewhere). Every
string a client chose (topic, group, member and client ids, hosts) goes through ``esc``.
"""
from __future__ import annotations

from importlib import resources
from urllib.parse import parse_qsl, quote

from ..protocol.catalog import catalog
from .params import ControlError
from .views import GroupSnapshot, group_ids
from .web_schemas import schema_registry_section
from .web_security import security
from .web_share import share_groups
from .web_telemetry import telemetry
from .web_timeline import clock_text, duration_text, esc, state_badge, timeline  # noqa: F401 (esc: shared)

ASSETS = {"page.js": "text/javascript; charset=utf-8", "page.css": "text/css; charset=utf-8",
          "icon.svg": "image/svg+xml"}
HEADERS = {"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                      "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
COLORS = 10                 # member colours in page.css (.c0 ... .c9)
DETAILED_GROUPS = 24        # groups drawn with members and partitions (the rest: one line each)
PARTITIONS_SHOWN = 64       # per topic in the topics table
REQUEST_ROWS = 200
NOSCRIPT_REFRESH_S = 5


def asset_pages() -> dict[str, tuple[str, bytes]]:
    """``/ui/NAME`` -> (content type, bytes) for the files shipped in kafkaemu/control/ui."""
    root = resources.files("kafkaemu.control") / "ui"
    return {f"/ui/{name}": (content_type, (root / name).read_bytes()) for name, content_type in ASSETS.items()}


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _partitions_text(assignment) -> str:
    if assignment is None:
        return "(not a consumer protocol: not decoded)"
    return "; ".join(f"{a['topic']}: {', '.join(map(str, a['partitions']))}" for a in assignment) or "none"


# -- the page -----------------------------------------------------------------------------------
def render_page(control, query: str, notice: str | None = None) -> bytes:
    """The page; ``notice`` is a warning shown at its top (an open control port)."""
    params = dict(parse_qsl(query, keep_blank_values=True))
    state = _state(control)
    token = params.get("token")
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>kafkaemu</title>",
        '<link rel="icon" href="/ui/icon.svg" type="image/svg+xml">',
        '<link rel="stylesheet" href="/ui/page.css">',
        f'<noscript><meta http-equiv="refresh" content="{NOSCRIPT_REFRESH_S}"></noscript>',
        '<script src="/ui/page.js" defer></script>',
        "</head><body>",
        '<header><h1><img src="/ui/icon.svg" alt="" width="22" height="22"> kafkaemu</h1>',
        '<nav><a href="#topics">Topics</a> <a href="#groups">Groups</a> <a href="#share-groups">Share groups</a> '
        '<a href="#timeline">Timeline</a> <a href="#requests">Requests</a> <a href="#telemetry">Telemetry</a> '
        '<a href="#schemas">Schemas</a></nav>',
        '<span id="live" class="live" role="status">'
        f"<noscript>snapshot; reloads every {NOSCRIPT_REFRESH_S} s</noscript></span>",
        '<button id="pause" type="button" hidden>Pause</button>',
        "</header>",
        f'<p class="warn notice" role="alert">Warning: {esc(notice)}</p>' if notice else "",
        f'<div id="summary" class="summary" data-live>{_summary(state)}</div>',
        '<main>',
        f'<section id="topics"><h2>Topics and partitions</h2><div id="topics-body" data-live>{_topics(state)}</div>'
        "</section>",
        f'<section id="groups"><h2>Consumer groups</h2><div id="groups-body" data-live>{_groups(state)}</div>'
        "</section>",
        '<section id="share-groups"><h2>Share groups</h2>'
        f'<div id="share-groups-body" data-live>{share_groups(control)}</div></section>',
        '<section id="timeline"><h2>Rebalance timeline</h2>'
        f'<div id="timeline-body" data-live>{timeline(control, state)}</div></section>',
        '<section id="requests"><h2>Request log</h2>', _request_filters(params, token),
        f'<div id="requests-body" data-live>{_requests(control, params)}</div></section>',
        '<section id="telemetry"><h2>Client telemetry</h2>'
        f'<div id="telemetry-body" data-live>{telemetry(control)}</div></section>',
        '<section id="schemas"><h2>Schema registry</h2>'
        f'<div id="schemas-body" data-live>{schema_registry_section(control.broker.store)}</div></section>',
        f'<section id="security"><h2>Security</h2><div id="security-body" data-live>{security(control)}</div>'
        "</section>" if getattr(control.broker, "authorizer", None) is not None else "",
        "</main></body></html>",
    ]
    return "\n".join(parts).encode()


def _state(control) -> dict:
    """What the page shows, read once: as ``GET /api/state``, but each group read once too, in
    detail (members, assignments, offsets) for the first DETAILED_GROUPS with members."""
    broker = control.broker
    groups, detailed = [], 0
    for group_id in group_ids(broker):
        snapshot = GroupSnapshot(broker, group_id)
        if snapshot.member_count and detailed < DETAILED_GROUPS:
            detailed += 1
            groups.append(snapshot.detail())
        else:
            groups.append(snapshot.summary())
    return {"clock": control.run("clock_get", {}), "nodes": control.run("nodes", {})["nodes"],
            "topics": control.run("topics", {})["topics"], "faults": control.run("faults", {})["faults"],
            "api_version_caps": control.run("api_version_caps", {})["caps"],
            "request_log": broker.interceptor.log.status(), "groups": groups}


def member_count(group: dict) -> int:
    """A group summary's member count (``members``), or a detailed view's (``member_count``)."""
    return group["member_count"] if "member_count" in group else group["members"]


def _summary(state: dict) -> str:
    clock = state["clock"]
    nodes = " ".join(f'<span class="node {"up" if n["running"] else "down"}" title="{esc(n["host"])}:{n["port"]}, '
                     f'{"running" if n["running"] else "stopped"}{"" if n["registered"] else ", unregistered"}'
                     f'{", quorum voter" if n["voter"] else ""}, leader of {n["leader_of"]} partitions">'
                     f'node {n["node_id"]} {"up" if n["running"] else "stopped"}</span>' for n in state["nodes"])
    rlog = state["request_log"]
    active_faults = [f for f in state["faults"] if f["active"]]
    items = [f'broker clock <time datetime="{esc(clock["iso"])}">{esc(clock["iso"])}</time>'
             + (" (manual)" if clock["manual"] else ""), nodes,
             count(len(state["topics"]), "topic"), count(len(state["groups"]), "group"),
             f'request log {"on" if rlog["enabled"] else "off"}']
    if active_faults:
        items.append(f'<a href="#faults" class="warn">{count(len(active_faults), "fault rule")} active</a>')
    if state["api_version_caps"]:
        items.append(count(len(state["api_version_caps"]), "API version cap"))
    out = " · ".join(items)
    if active_faults:
        rows = "".join(
            f'<tr><td>{f["id"]}</td><td>{esc(f["api"])}</td><td>{esc(_fault_effect(f))}</td>'
            f'<td>{esc(_fault_scope(f))}</td><td>{f["fired"]}</td>'
            f'<td>{"until removed" if f["count"] is None else f["count"]}</td></tr>'
            for f in active_faults)
        out += ('<table id="faults" class="faults"><caption>Fault rules</caption><thead><tr><th>id</th><th>API</th>'
                f'<th>does</th><th>scope</th><th>fired</th><th>count</th></tr></thead><tbody>{rows}</tbody></table>')
    return out


def _fault_effect(f: dict) -> str:
    effects = []
    if f["error"]:
        effects.append(f["error"])
    if f["delay_ms"]:
        effects.append(f"delay {duration_text(f['delay_ms'])}")
    if f["drop_connection"]:
        effects.append("drop connection")
    if f["black_hole"]:
        effects.append("black hole")
    return ", ".join(effects)


def _fault_scope(f: dict) -> str:
    scope = [f"{k} {f[k]}" for k in ("client_id", "node", "topic", "partition", "min_version", "max_version")
             if f[k] is not None]
    return ", ".join(scope) or "every request"


# -- topics -------------------------------------------------------------------------------------
def _topics(state: dict) -> str:
    if not state["topics"]:
        return '<p class="empty-note">No topics yet.</p>'
    rows = []
    for t in sorted(state["topics"], key=lambda t: t["name"]):
        parts = t["partitions"][:PARTITIONS_SHOWN]
        more = t["partition_count"] - len(parts)
        span = len(parts) + (1 if more else 0)
        head = (f'<th scope="rowgroup" rowspan="{span}" class="tname">{esc(t["name"])}'
                f'<div class="sub">{count(t["partition_count"], "partition")}</div></th>')
        for i, p in enumerate(parts):
            leader = "offline" if p["leader"] < 0 else p["leader"]
            rows.append(f'<tr data-topic="{esc(t["name"])}" data-partition="{p["partition"]}">{head if i == 0 else ""}'
                        f'<td>{p["partition"]}</td><td class="{"warn" if p["leader"] < 0 else ""}">{leader}</td>'
                        f'<td>{p["leader_epoch"]}</td><td>{p["log_start_offset"]}</td><td>{p["high_watermark"]}</td>'
                        f'<td>{p["batches"]}</td><td>{_bytes_text(p["size_bytes"])}</td></tr>')
        if more:
            rows.append(f'<tr><td colspan="7" class="sub">… {more} more partitions '
                        f'(GET /api/topics/{esc(quote(t["name"]))})</td></tr>')
    return ('<table class="topics"><thead><tr><th>topic</th><th>partition</th><th>leader</th><th>leader epoch</th>'
            '<th>log start</th><th>high watermark</th><th>batches</th><th>size</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _bytes_text(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


# -- groups -------------------------------------------------------------------------------------
def _groups(state: dict) -> str:
    summaries = state["groups"]
    if not summaries:
        return '<p class="empty-note">No groups yet.</p>'
    rows = "".join(
        f'<tr data-group="{esc(g["group_id"])}"><td class="gid">{esc(g["group_id"])}</td><td>{esc(g["type"])}</td>'
        f'<td>{state_badge(g["state"])}</td><td>{g["generation"]}</td><td>{member_count(g)}</td>'
        f'<td>{"" if g["lag"] is None else g["lag"]}</td><td>{g["coordinator"]}</td>'
        f'<td>{esc(g.get("protocol") or "")}</td></tr>' for g in summaries)
    out = [('<table class="group-list"><thead><tr><th>group</th><th>type</th><th>state</th><th>generation</th>'
            '<th>members</th><th>lag</th><th>coordinator</th><th>assignor</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>')]
    out += [_group_card(g) for g in summaries if isinstance(g["members"], list)]
    undrawn = sum(1 for g in summaries if not isinstance(g["members"], list) and g["members"])
    if undrawn:
        out.append(f'<p class="sub">{count(undrawn, "more group")} with members not drawn '
                   f'(kafkaemu ctl group NAME).</p>')
    return "\n".join(out)


def _member_colours(members: list[dict]) -> dict[str, int]:
    ordered = sorted(members, key=lambda m: (m.get("client_id") or "", m["member_id"]))
    return {m["member_id"]: i % COLORS for i, m in enumerate(ordered)}


def _group_card(g: dict) -> str:
    members = sorted(g["members"], key=lambda m: (m.get("client_id") or "", m["member_id"]))
    colour = _member_colours(members)
    consumer_type = g["type"] == "consumer"
    owner: dict[tuple[str, int], dict] = {}
    for m in members:
        for a in m["assignment"] or []:
            for p in a["partitions"]:
                owner[(a["topic"], p)] = m
    meta = [f'generation {g["generation"]}', count(g["member_count"], "member"),
            esc(g.get("protocol") or "no assignor"),
            f'coordinator {g["coordinator"]}', f'lag {"none" if g["lag"] is None else g["lag"]}']
    if not g["fully_assigned"] and g["state"] == "Stable":
        meta.append('<span class="warn">not every partition assigned</span>')
    head = (f'<article class="group" data-group="{esc(g["group_id"])}" data-state="{esc(g["state"])}" '
            f'data-generation="{g["generation"]}" data-members="{g["member_count"]}">'
            f'<h3><span class="gid">{esc(g["group_id"])}</span> {state_badge(g["state"])} '
            f'<span class="meta">{" · ".join(meta)}</span></h3>')
    member_rows = []
    for m in members:
        extra = (f'<td>{esc(m["member_state"])} (epoch {m["member_epoch"]})</td>' if consumer_type else "")
        leader = ' <b class="leader">leader</b>' if m.get("leader") else ""
        instance = m.get("instance_id")
        instance = f' <span class="sub">instance {esc(instance)}</span>' if instance else ""
        member_rows.append(
            f'<tr class="member" data-member="{esc(m["member_id"])}" data-client="{esc(m["client_id"])}">'
            f'<td><span class="swatch c{colour[m["member_id"]]}"></span></td>'
            f'<td class="client">{esc(m["client_id"])}{leader}{instance}</td>'
            f'<td class="mono">{esc(m["member_id"])}</td><td>{esc(m["client_host"])}</td>{extra}'
            f'<td class="parts-text">{esc(_partitions_text(m["assignment"]))}</td></tr>')
    members_table = ('<table class="members"><thead><tr><th></th><th>client id</th><th>member id</th><th>host</th>'
                     f'{"<th>member state</th>" if consumer_type else ""}<th>partitions</th></tr></thead>'
                     f'<tbody>{"".join(member_rows)}</tbody></table>')
    return head + members_table + _assignment_drawing(g, members, owner, colour) + _lag_table(g, owner) + "</article>"


def _group_topics(g: dict, members: list[dict], owner: dict) -> list[str]:
    topics = {t for m in members for t in (m.get("subscription") or [])}
    topics |= {t for t, _ in owner} | {o["topic"] for o in g["offsets"]}
    return sorted(topics)


def _assignment_drawing(g: dict, members: list[dict], owner: dict, colour: dict) -> str:
    lag = {(o["topic"], o["partition"]): o for o in g["offsets"]}
    rows = []
    for topic in _group_topics(g, members, owner):
        count = max([p + 1 for t, p in list(owner) + list(lag) if t == topic], default=0)
        cells = []
        for p in range(min(count, 256)):
            m = owner.get((topic, p))
            o = lag.get((topic, p))
            lag_text = "" if o is None or o["lag"] is None else f'lag {o["lag"]}'
            who = m["client_id"] if m is not None else "unassigned"
            title = f"{topic}-{p}: {who}"
            if o is not None:
                title += (f", committed {o['committed_offset'] if o['committed_offset'] is not None else 'nothing'}, "
                          f"high watermark {o['high_watermark']}, {lag_text or 'lag unknown'}")
            css = f'c{colour[m["member_id"]]}' if m is not None else "none"
            cells.append(f'<li class="part {css}" data-partition="{p}" '
                         f'data-owner="{esc(m["client_id"] if m else "")}" title="{esc(title)}">'
                         f'<b>{p}</b><span class="owner">{esc(who)}</span>'
                         f'<span class="lag">{esc(lag_text)}</span></li>')
        rows.append(f'<div class="topic-row" data-topic="{esc(topic)}"><div class="tname">{esc(topic)}</div>'
                    f'<ol class="parts">{"".join(cells)}</ol></div>')
    if not rows:
        return ""
    return f'<div class="assignment" aria-label="who holds which partition">{"".join(rows)}</div>'


def _lag_table(g: dict, owner: dict) -> str:
    if not g["offsets"]:
        return ""
    rows = "".join(
        f'<tr><td>{esc(o["topic"])}</td><td>{o["partition"]}</td>'
        f'<td>{esc(holder["client_id"]) if (holder := owner.get((o["topic"], o["partition"]))) else ""}</td>'
        f'<td>{"" if o["committed_offset"] is None else o["committed_offset"]}</td>'
        f'<td>{"" if o["high_watermark"] is None else o["high_watermark"]}</td>'
        f'<td class="{"lagging" if o["lag"] else ""}">{"" if o["lag"] is None else o["lag"]}</td></tr>'
        for o in g["offsets"])
    return ('<details class="lag" open><summary>Offsets and lag per partition</summary><table class="offsets">'
            '<thead><tr><th>topic</th><th>partition</th><th>held by</th><th>committed</th><th>high watermark</th>'
            f'<th>lag</th></tr></thead><tbody>{rows}</tbody></table></details>')


# -- the request log ------------------------------------------------------------------------------
FILTERS = ("api", "client_id", "node", "errors")


def _request_filters(params: dict, token: str | None) -> str:
    names = sorted(catalog().api_name(key) for key in catalog().requests)
    apis = "".join(f'<option value="{esc(name)}">' for name in names)
    errors = params.get("errors", "").lower() in ("1", "true", "on", "yes")
    hidden = f'<input type="hidden" name="token" value="{esc(token)}">' if token is not None else ""
    return ('<form id="filters" class="filters" method="get" action="/#requests">'
            f'<label>API <input name="api" list="api-names" value="{esc(params.get("api", ""))}" '
            'placeholder="any" size="16"></label>'
            f'<datalist id="api-names">{apis}</datalist>'
            f'<label>client id <input name="client_id" value="{esc(params.get("client_id", ""))}" placeholder="any" '
            'size="18"></label>'
            f'<label>node <input name="node" type="number" min="0" value="{esc(params.get("node", ""))}" '
            'placeholder="any"></label>'
            f'<label><input type="checkbox" name="errors" value="1"{" checked" if errors else ""}> errors only</label>'
            f'{hidden}<button type="submit">Filter</button></form>')


def _requests(control, params: dict) -> str:
    query = {k: v for k, v in params.items() if k in FILTERS and v != ""}
    if "errors" in query:
        query["errors"] = query["errors"].lower() in ("1", "true", "on", "yes")
    rlog = control.broker.interceptor.log.status()
    if rlog["enabled"]:
        status = (f'<p class="sub" data-log="on">Logging every request ({"with" if rlog["bodies"] else "without"} '
                  f'bodies): {rlog["size"]} kept of {rlog["capacity"]}, {rlog["evicted"]} dropped as old. '
                  f'Newest first, the last {REQUEST_ROWS} that match.</p>')
    else:
        status = ('<p class="sub" data-log="off">The request log is off. '
                  '<button type="button" data-action="log-on" hidden>Start logging requests</button> '
                  '<span class="howto">Turn it on with <code>kafkaemu ctl requests on</code> or '
                  '<code>PUT /api/requests/config {"enabled": true}</code>.</span></p>')
    try:
        found = control.run("requests", {**query, "last": REQUEST_ROWS})["entries"]
    except ControlError as exc:
        return status + f'<p class="error">{esc(exc.message)}</p>'
    if not found:
        return status + ('<p class="empty-note">No request matches.</p>' if rlog["size"] else "")
    rows = []
    for r in reversed(found):
        errors = ", ".join(r["error_codes"])
        rows.append(f'<tr class="{"err" if errors else ""}" data-seq="{r["seq"]}"><td>{r["seq"]}</td>'
                    f'<td>{clock_text(r["time_ms"])}</td><td>{r["node"]}</td><td>{r["connection"]}</td>'
                    f'<td>{esc(r["client_host"])}</td><td class="client">{esc(r["client_id"])}</td>'
                    f'<td>{esc(r["api"])} v{r["version"]}</td><td>{r["correlation_id"]}</td>'
                    f'<td>{r["latency_ms"]:.1f}</td><td>{esc(r["outcome"])}</td><td>{esc(errors)}</td>'
                    f'<td>{"" if r["fault"] is None else r["fault"]}</td><td>{esc(r.get("principal") or "")}</td></tr>')
    return (status + '<div class="scroll-box"><table class="requests"><thead><tr><th>seq</th><th>time</th>'
            '<th>node</th><th>conn</th>'
            '<th>host</th><th>client id</th><th>API</th><th>corr id</th><th>latency ms</th><th>outcome</th>'
            f'<th>errors</th><th>fault</th><th>principal</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')
