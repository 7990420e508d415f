"""The web page's security section (shown while authorization is on): the ACLs and the latest
requests the authorizer denied, with the principal, host, operation and resource of each."""
from __future__ import annotations

from .web_timeline import esc

DENIAL_ROWS = 50


def security(control) -> str:
    authorizer = getattr(control.broker, "authorizer", None)
    if authorizer is None:
        return ""
    acls = control.run("acls", {})["acls"]
    denials = authorizer.denials[-DENIAL_ROWS:]
    acl_rows = "".join(
        f'<tr><td>{esc(a["permission"])}</td><td>{esc(a["principal"])}</td><td>{esc(a["operation"])}</td>'
        f'<td>{esc(a["resource_type"])}</td><td>{esc(a["pattern_type"])}</td><td>{esc(a["resource_name"])}</td>'
        f'<td>{esc(a["host"])}</td></tr>' for a in acls)
    denial_rows = "".join(
        f'<tr class="err"><td>{esc(d["principal"])}</td><td>{esc(d["host"])}</td><td>{esc(d["api"])}</td>'
        f'<td>{esc(d["operation"])}</td><td>{esc(d["resource_type"])}</td><td>{esc(d["resource_name"])}</td></tr>'
        for d in reversed(denials))
    parts = [f'<p class="sub">{len(acls)} ACL(s); {len(authorizer.denials)} denied request(s) kept, newest first.</p>']
    if acls:
        parts.append('<div class="scroll-box"><table class="acls"><thead><tr><th>permission</th><th>principal</th>'
                     '<th>operation</th><th>resource</th><th>pattern</th><th>name</th><th>host</th></tr></thead>'
                     f'<tbody>{acl_rows}</tbody></table></div>')
    if denials:
        parts.append('<div class="scroll-box"><table class="denials"><thead><tr><th>principal</th><th>host</th>'
                     '<th>API</th><th>operation</th><th>resource</th><th>name</th></tr></thead>'
                     f'<tbody>{denial_rows}</tbody></table></div>')
    return "".join(parts)
