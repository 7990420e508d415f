"""``kafkaemu serve``'s options as data, and its command line read without argparse when it is
plain: every option spelled out in full, each value after its flag (or after ``=``) and not
starting with ``-``. That is how tools and ``KafkaEmulator(subprocess_mode=True)`` start it.
Anything else (``--help``, an abbreviated or unknown flag, a missing or refused value, another
command) goes to argparse's parser (``cli_parser.py``), which gives the help and the errors; the
plain reading gives the namespace that parser would. Building that parser (104 flags in their
help sections) and importing argparse cost a start about 6 ms, more than reading the line."""
from __future__ import annotations

from types import SimpleNamespace

from .config import SETTINGS
from .logging import LEVELS

LOG_FORMATS = ("console", "json")
# serve's options that are not settings, with the values an absent one leaves (argparse's defaults)
SERVE_DEFAULTS = {"config": None, "override": [], "log_format": "console", "log_level": "info",
                  "print_config": False}
# flag -> (dest, how it is read: "value", "append" (repeatable) or ("const", value))
_OPTIONS: dict[str, tuple[str, object]] = {
    "--config": ("config", "value"), "--override": ("override", "append"), "--log-format": ("log_format", "value"),
    "--log-level": ("log_level", "value"), "--print-config": ("print_config", ("const", True)),
    **{s.flag: (s.name, ("const", not s.default) if s.kind == "bool" else "append" if s.kind == "pairs" else "value")
       for s in SETTINGS.values() if s.flag is not None}}


def plain_serve_args(argv: list[str]) -> SimpleNamespace | None:
    """What argparse's parser makes of ``argv`` (``["serve", ...]``), when the line is plain;
    None when it is not (then argparse reads it)."""
    if argv[:1] != ["serve"]:
        return None
    values: dict[str, object] = {"version": None, "command": "serve", **SERVE_DEFAULTS, "override": []}
    i = 1
    while i < len(argv):
        flag, eq, value = argv[i].partition("=")
        option = _OPTIONS.get(flag) if flag.startswith("--") else None
        if option is None:
            return None
        dest, how = option
        if isinstance(how, tuple):   # a switch: takes no value
            if eq:
                return None
            values[dest] = how[1]
            i += 1
            continue
        if not eq:
            if i + 1 == len(argv) or argv[i + 1].startswith("-"):
                return None
            value = argv[i + 1]
            i += 1
        i += 1
        if dest == "log_level":
            value = value.lower()
            if value not in LEVELS:
                return None
        elif dest == "log_format" and value not in LOG_FORMATS:
            return None
        if how == "append":
            values[dest] = [*values.get(dest, []), value]
        else:
            values[dest] = value
    return SimpleNamespace(**values)
