"""The web page's client telemetry (KIP-714): a card per client instance that pushed metrics,
leading with what a consumer reports about itself (its lag, its fetch latency), then every
metric it pushed in a collapsed table."""
from __future__ import annotations

from .web_timeline import esc

HIGHLIGHTS = (("lag", "records.lag"), ("fetch latency", "fetch.latency"))


def _value(m: dict) -> str:
    value = m["value"] if m["value"] is not None else m.get("count")
    if isinstance(value, float):
        value = f"{value:.3f}".rstrip("0").rstrip(".")
    unit = f' {m["unit"]}' if m.get("unit") and m["unit"] != "1" else ""
    return f"{value}{unit}"


def _label(m: dict) -> str:
    attrs = ", ".join(f"{k}={v}" for k, v in sorted(m["attributes"].items()))
    return m["name"] + (f" {{{attrs}}}" if attrs else "")


def telemetry(control) -> str:
    answer = control.run("telemetry", {})
    if not answer["clients"]:
        subs = len(answer["subscriptions"])
        return (f'<p class="empty-note">No client has pushed metrics yet ({subs} CLIENT_METRICS subscription'
                f'{"" if subs == 1 else "s"}).</p>')
    return "\n".join(_card(c) for c in answer["clients"])


def _card(c: dict) -> str:
    metrics = sorted(c["metrics"], key=lambda m: _label(m))
    highlights = []
    for title, needle in HIGHLIGHTS:
        found = [m for m in metrics if needle in m["name"]]
        if found:
            items = "".join(f'<li><span class="mono">{esc(_label(m))}</span>: <b>{esc(_value(m))}</b></li>'
                            for m in found[:12])
            highlights.append(f'<div class="telemetry-highlight" data-kind="{esc(title)}"><h4>{esc(title)}</h4>'
                              f'<ul>{items}</ul></div>')
    rows = "".join(f'<tr><td class="mono">{esc(_label(m))}</td><td>{esc(m["kind"])}</td>'
                   f'<td>{esc(_value(m))}</td></tr>' for m in metrics)
    software = " ".join(x for x in (c["client_software_name"], c["client_software_version"]) if x)
    return (f'<article class="telemetry-client" data-client="{esc(c["client_id"])}">'
            f'<h3><span class="client">{esc(c["client_id"] or "(no client id)")}</span> '
            f'<span class="meta">{esc(software)} · {esc(c["client_source_address"])} · '
            f'instance <span class="mono">{esc(c["client_instance_id"])}</span> · {c["pushes"]} pushes'
            f'{" · terminated" if c.get("terminating") else ""}</span></h3>'
            f'{"".join(highlights)}'
            f'<details><summary>{len(metrics)} metrics</summary><table class="telemetry-metrics"><thead><tr>'
            f'<th>metric</th><th>kind</th><th>latest</th></tr></thead><tbody>{rows}</tbody></table></details>'
            f'</article>')
