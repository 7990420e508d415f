"""The web page's rebalance timeline: group states over time as an inline SVG (one lane per
group, each transition given room, joins and leaves marked), and the table of transitions; the
small text helpers the page shares."""
from __future__ import annotations

import html
import math
import time
from itertools import pairwise

TIMELINE_TRANSITIONS = 300  # the newest journal entries the timeline draws
TIMELINE_LANES = 30
TRANSITION_ROWS = 100
STATE_CLASS = {"Empty": "empty", "PreparingRebalance": "preparing", "CompletingRebalance": "completing",
               "Stable": "stable", "Dead": "dead", "Assigning": "assigning", "Reconciling": "reconciling"}


def esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def clock_text(ms: int) -> str:
    """HH:MM:SS.mmm (UTC) of a broker clock time."""
    return time.strftime("%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}"


def duration_text(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


def state_badge(state: str) -> str:
    return f'<span class="state st-{STATE_CLASS.get(state, "other")}">{esc(state)}</span>'


LABEL_W, TOP, BAR_H, STEP, END_PAD = 180, 34, 24, 30, 30
MARK_ROWS, MARK_ROW_H, CHAR_W = 3, 13, 7.2   # joined/left labels under a lane, stacked so they do not overlap
LANE_H = BAR_H + MARK_ROWS * MARK_ROW_H + 14
MIN_WIDTH = 1100   # a short history is spread to this width
MARK_CHARS = 30


def _step(gap_ms: int) -> float:
    """Horizontal room between two transitions: every one is visible, longer gaps get more."""
    return STEP + 22 * math.log10(1 + max(gap_ms, 0) / 50)


def membership_changes(entries: list[dict]) -> dict[int, tuple[list[dict], list[dict]]]:
    """seq -> (joined, left) members, from each entry's members against the group's previous entry
    (a group's first entry counts as joined only when it starts from Empty)."""
    previous: dict[str, dict[str, dict] | None] = {}
    out = {}
    for e in entries:
        now = {m["member_id"]: m for m in e.get("members", [])}
        before = previous.get(e["group"], {} if e["from"] == "Empty" else None)
        if before is not None:
            joined = [m for k, m in now.items() if k not in before]
            left = [m for k, m in before.items() if k not in now]
            if joined or left:
                out[e["seq"]] = (joined, left)
        previous[e["group"]] = now
    return out


def _names(members: list[dict]) -> str:
    return ", ".join(m["client_id"] or m["member_id"] for m in members)


def _fit(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"


def timeline(control, state: dict) -> str:
    first = max(0, control.journal_next_seq - 1 - TIMELINE_TRANSITIONS)
    entries = control.run("journal_get", {"after": first, "limit": TIMELINE_TRANSITIONS})["entries"]
    if not entries:
        return '<p class="empty-note">No group has changed state yet.</p>'
    now_ms = state["clock"]["now_ms"]
    changes = membership_changes(entries)
    lanes: list[str] = []
    for e in entries:
        if e["group"] not in lanes:
            lanes.append(e["group"])
    hidden = lanes[:-TIMELINE_LANES] if len(lanes) > TIMELINE_LANES else []
    lanes = lanes[-TIMELINE_LANES:]
    lane_of = {g: i for i, g in enumerate(lanes)}
    steps = [0.0] + [_step(e["at_ms"] - p["at_ms"]) for p, e in pairwise(entries)]
    steps.append(_step(now_ms - entries[-1]["at_ms"]))
    spread = max(1.0, (MIN_WIDTH - LABEL_W - 20 - END_PAD) / sum(steps))
    xs, x = [], LABEL_W + 10
    for step in steps[:-1]:
        x += step * spread
        xs.append(x)
    x_end = x + steps[-1] * spread + END_PAD
    width, height = int(x_end + 10), TOP + LANE_H * len(lanes) + 4
    svg = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="group states over time">']
    last_label = -1e9
    for e, ex in zip(entries, xs):
        if ex - last_label >= 96:
            svg.append(f'<line class="tick" x1="{ex:.1f}" y1="{TOP - 12}" x2="{ex:.1f}" y2="{height}"/>'
                       f'<text class="axis" x="{ex:.1f}" y="{TOP - 16}">{clock_text(e["at_ms"])}</text>')
            last_label = ex
    svg.append(f'<text class="axis now" x="{x_end - 4:.1f}" y="{TOP - 16}" text-anchor="end">now</text>')
    by_lane: dict[str, list[tuple[dict, float]]] = {g: [] for g in lanes}
    for e, ex in zip(entries, xs):
        if e["group"] in lane_of:
            by_lane[e["group"]].append((e, ex))
    for group, points in by_lane.items():
        y = TOP + LANE_H * lane_of[group]
        row_ends = [float("-inf")] * MARK_ROWS
        svg.append(f'<g class="lane" data-group="{esc(group)}">'
                   f'<text class="lane-label" x="6" y="{y + BAR_H / 2 + 5}">{esc(_fit(group, 24))}'
                   f'<title>{esc(group)}</title></text>')
        for i, (e, ex) in enumerate(points):
            if i + 1 < len(points):
                nx, until = points[i + 1][1], points[i + 1][0]["at_ms"]
            else:
                nx, until = x_end - END_PAD / 2, now_ms
            w = max(nx - ex, 1)
            members = len(e.get("members", []))
            title = (f'{group}: {e["to"]} (from {e["from"]}), generation {e["generation"]}, {members} members, '
                     f'at {clock_text(e["at_ms"])} for {duration_text(until - e["at_ms"])}')
            short = e["to"].replace("Rebalance", "")
            gen = f' g{e["generation"]}' if e["to"] in ("Stable", "CompletingRebalance") else ""
            label = next((text for text in (e["to"] + gen, short + gen, short, gen.strip())
                          if len(text) * CHAR_W <= w - 6), "")
            svg.append(f'<rect class="seg st-{STATE_CLASS.get(e["to"], "other")}" data-state="{esc(e["to"])}" '
                       f'data-generation="{e["generation"]}" data-members="{members}" data-seq="{e["seq"]}" '
                       f'x="{ex:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}"><title>{esc(title)}</title></rect>')
            if label:
                svg.append(f'<text class="seg-label st-{STATE_CLASS.get(e["to"], "other")}" x="{ex + 4:.1f}" '
                           f'y="{y + BAR_H / 2 + 4}">{esc(label)}</text>')
            joined, left = changes.get(e["seq"], ([], []))
            for kind, sign, who in (("joined", "+", joined), ("left", "−", left)):
                if not who:
                    continue
                text = sign + _fit(_names(who), MARK_CHARS)
                row = next((r for r, end in enumerate(row_ends) if end < ex), None)
                if row is None:
                    row = row_ends.index(min(row_ends))
                row_ends[row] = ex + 2 + len(text) * CHAR_W + 12
                ty = y + BAR_H + 14 + MARK_ROW_H * row
                full = f'{kind} at {clock_text(e["at_ms"])}: ' + "; ".join(
                    f'{m["client_id"]} ({m["member_id"]})' for m in who)
                svg.append(f'<line class="mark {kind}" x1="{ex:.1f}" y1="{y + BAR_H}" x2="{ex:.1f}" y2="{ty - 9}"/>'
                           f'<text class="mark {kind}" data-{kind}="{esc(_names(who))}" x="{ex + 2:.1f}" y="{ty}">'
                           f'{esc(text)}<title>{esc(full)}</title></text>')
        svg.append("</g>")
    svg.append("</svg>")
    legend = " ".join(f'<span class="key st-{c}">{esc(s)}</span>' for s, c in STATE_CLASS.items())
    note = (f'<p class="sub">{len(hidden)} older groups not drawn.</p>' if hidden else "")
    out = [f'<div class="legend">{legend} <span class="mark joined">+joined</span> '
           '<span class="mark left">−left</span> <span class="sub">each transition gets room; longer '
           'gaps get more (the axis is not linear)</span></div>',
           f'<div class="timeline-scroll">{"".join(svg)}</div>', note, _transition_table(entries, changes)]
    return "\n".join(out)


def _transition_table(entries: list[dict], changes: dict) -> str:
    rows = []
    for e in reversed(entries[-TRANSITION_ROWS:]):
        joined, left = changes.get(e["seq"], ([], []))
        rows.append(f'<tr data-group="{esc(e["group"])}" data-seq="{e["seq"]}"><td>{e["seq"]}</td>'
                    f'<td>{clock_text(e["at_ms"])}</td><td class="gid">{esc(e["group"])}</td>'
                    f'<td>{state_badge(e["from"])} → {state_badge(e["to"])}</td><td>{e["generation"]}</td>'
                    f'<td>{len(e.get("members", []))}</td><td class="joined">{esc(_names(joined))}</td>'
                    f'<td class="left">{esc(_names(left))}</td></tr>')
    return ('<details class="transitions" open><summary>Transitions (newest first)</summary>'
            '<div class="scroll-box"><table class="transitions"><thead><tr><th>seq</th><th>time</th><th>group</th>'
            '<th>transition</th>'
            '<th>generation</th><th>members</th><th>joined</th><th>left</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></details>')
