"""The web page's share groups (KIP-932): each with its members and, per share partition, a strip
of its in-flight records coloured by state (Available, Acquired by a member, Acknowledged,
Archived), each cell titled with its offset, delivery count and owner."""
from __future__ import annotations

from .web_timeline import esc, state_badge

STRIP_RECORDS = 200   # cells drawn per share partition; the rest are counted


def share_groups(control) -> str:
    groups = control.run("share_groups", {})["groups"]
    if not groups:
        return '<p class="empty-note">No share groups yet.</p>'
    return "\n".join(_card(control, g["group_id"]) for g in groups)


def _card(control, group_id: str) -> str:
    g = control.run("share_group", {"group": group_id})
    colour = {m["member_id"]: i % 10 for i, m in enumerate(sorted(g["members"], key=lambda m: (m["client_id"],
                                                                                              m["member_id"])))}
    rows = "".join(
        f'<tr class="member" data-member="{esc(m["member_id"])}"><td><span class="swatch c{colour[m["member_id"]]}">'
        f'</span></td><td class="client">{esc(m["client_id"])}</td><td class="mono">{esc(m["member_id"])}</td>'
        f'<td>{m["member_epoch"]}</td><td class="parts-text">{esc(_partitions(m["assignment"]))}</td></tr>'
        for m in g["members"])
    members = ('<table class="members"><thead><tr><th></th><th>client id</th><th>member id</th><th>epoch</th>'
               f'<th>partitions</th></tr></thead><tbody>{rows}</tbody></table>') if rows else ""
    strips = "".join(_strip(control, group_id, p, colour) for p in g["partitions"])
    return (f'<article class="group share-group" data-group="{esc(group_id)}" data-state="{esc(g["state"])}">'
            f'<h3><span class="gid">{esc(group_id)}</span> {state_badge(g["state"])} '
            f'<span class="meta">epoch {g["group_epoch"]} · {len(g["members"])} members</span></h3>'
            f'{members}{strips}</article>')


def _partitions(assignment: list[dict]) -> str:
    return ", ".join(a["topic"] + "-" + str(p) for a in assignment for p in a["partitions"])


def _offsets(p: dict) -> str:
    if p["start_offset"] < 0:   # assigned, not fetched from yet: uninitialized, as in Kafka
        return "not fetched yet"
    return f'start {p["start_offset"]} · end {p["end_offset"]}'


def _strip(control, group_id: str, p: dict, colour: dict) -> str:
    records = control.run("share_records", {"group": group_id, "topic": p["topic"], "partition": p["partition"]})
    cells = []
    for r in records["records"][:STRIP_RECORDS]:
        owner = r["owner"]
        kind = f'rec-{r["state"].lower()}' + (f' c{colour[owner]}' if owner in colour else "")
        title = f'offset {r["offset"]}: {r["state"]}, delivery {r["delivery_count"]}' + \
            (f', held by {owner}' if owner else "")
        cells.append(f'<span class="rec {kind}" title="{esc(title)}"></span>')
    more = len(records["records"]) - STRIP_RECORDS
    rest = f' <span class="sub">+{more} more</span>' if more > 0 else ""
    return (f'<div class="share-partition" data-partition="{esc(p["topic"])}-{p["partition"]}">'
            f'<span class="mono">{esc(p["topic"])}-{p["partition"]}</span> '
            f'<span class="sub">{_offsets(p)}</span> '
            f'<span class="strip">{"".join(cells)}</span>{rest}</div>')
