"""A connection's Kafka principal: ``User:<name>`` after SASL, from a TLS client certificate's
subject (Kafka's ``DefaultKafkaPrincipalBuilder``), else ``User:ANONYMOUS``.

A certificate's subject is written as Java's ``X500Principal.getName()`` writes it (RFC 2253: the
most specific name first, ``CN=alice,OU=eng,O=example``) and mapped by ``ssl.principal.mapping.rules``
as Kafka's ``SslPrincipalMapper``: comma-separated rules, ``DEFAULT`` (the name as is) or
``RULE:pattern/replacement/`` with an optional ``L`` or ``U`` (lower or upper case), the first rule
whose pattern matches the whole name wins; ``$1`` in a replacement is the pattern's first group."""
from __future__ import annotations

import re

ANONYMOUS = "User:ANONYMOUS"
DEFAULT_RULES = "DEFAULT"

# the rules' grammar, compiled by the first rules other than DEFAULT (and kept in re's cache), not at
# import, where it cost every start about 0.7 ms
_RULE = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = r"\s*(" + _RULE + r")\s*(?:,\s*|$)"
# X500Principal's RFC 2253 keywords; other attributes are written by their OID
_KEYWORDS = {"commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
             "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
             "domainComponent": "DC", "userId": "UID"}
_OIDS = {"emailAddress": "1.2.840.113549.1.9.1", "serialNumber": "2.5.4.5", "title": "2.5.4.12",
         "surname": "2.5.4.4", "givenName": "2.5.4.42", "initials": "2.5.4.43", "pseudonym": "2.5.4.65",
         "generationQualifier": "2.5.4.44", "dnQualifier": "2.5.4.46", "businessCategory": "2.5.4.15",
         "postalCode": "2.5.4.17"}


class TokenPrincipal(str):
    """The principal (``User:alice``) of a connection a delegation token authenticated: it may not
    create, renew, expire or describe tokens."""
    token_authenticated = True


class _Rule:
    def __init__(self, pattern: str | None = None, replacement: str = "", case: str = "") -> None:
        self.pattern = None if pattern is None else re.compile(pattern)
        self.replacement = replacement
        self.case = case

    def apply(self, name: str) -> str | None:
        if self.pattern is None:
            return name
        if self.pattern.fullmatch(name) is None:
            return None
        result = self.pattern.sub(self._replace, name)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result

    def _replace(self, match: re.Match) -> str:
        """Java's replacement syntax: ``$n`` a group (literal beyond the pattern's groups), ``\\x`` x."""
        out, text, i = [], self.replacement, 0
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 2
            elif c == "$" and i + 1 < len(text) and text[i + 1].isdigit():
                j = i + 1
                while j < len(text) and text[j].isdigit():
                    j += 1
                group = int(text[i + 1:j])
                out.append((match.group(group) or "") if group <= (match.re.groups or 0) else text[i:j])
                i = j
            else:
                out.append(c)
                i += 1
        return "".join(out)


class PrincipalMapper:
    """``ssl.principal.mapping.rules``; ValueError for rules that do not parse (or whose pattern is
    not a regular expression)."""

    def __init__(self, rules: str | None = DEFAULT_RULES) -> None:
        self.text = DEFAULT_RULES if rules is None else rules
        self.rules: list[_Rule] = []
        if self.text.strip() == DEFAULT_RULES:   # the default, as the grammar reads it
            self.rules.append(_Rule())
            return
        for text in (m.group(1) for m in re.finditer(_SPLITTER, self.text.strip()) if m.group(1) is not None):
            match = re.match(_RULE, text)
            if match is None or match.end() != len(text):
                raise ValueError(f"Invalid rule: `{text}`")
            if match.group(1) is not None:
                self.rules.append(_Rule())
            elif match.group(2) is not None:
                try:
                    self.rules.append(_Rule(match.group(2), match.group(3), match.group(4)))
                except re.error as exc:
                    raise ValueError(f"Invalid rule: `{text}`: {exc}") from None
            elif match.group(5):
                raise ValueError(f"Invalid rule: `{text}`")

    def name(self, distinguished_name: str) -> str:
        """The mapped name; ValueError when no rule applies (Kafka fails the connection)."""
        for rule in self.rules:
            result = rule.apply(distinguished_name)
            if result is not None:
                return result
        raise ValueError(f"No rules apply to {distinguished_name}, rules {self.text}")


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def distinguished_name(peer_certificate: dict) -> str:
    """The subject of ``ssl.SSLSocket.getpeercert()``'s certificate in RFC 2253 form."""
    rdns = []
    for rdn in reversed(peer_certificate.get("subject", ())):
        rdns.append("+".join(f"{_KEYWORDS.get(key) or _OIDS.get(key, key)}={_escape(value)}" for key, value in rdn))
    return ",".join(rdns)


def tls_principal(ssl_object, mapper: PrincipalMapper) -> str:
    """``User:<mapped subject>`` for a client that presented a certificate, else ANONYMOUS."""
    certificate = ssl_object.getpeercert() if ssl_object is not None else None
    if not certificate:
        return ANONYMOUS
    return "User:" + mapper.name(distinguished_name(certificate))
