"""Reading the data directory's small text files back, as Kafka's checkpoint readers do: a file
that does not parse (bytes that are not text, missing or extra numbers) is reported as unreadable
(None) with a warning, and the caller falls back as Kafka does (a recovery point of 0, the log
start at the first segment, epochs from the batches) instead of refusing to start."""
from __future__ import annotations

import json
import os
import re

from ..logging import get_logger

log = get_logger("kafkaemu.storage")
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")


def read_lines(path: str) -> list[str] | None:
    """The file's lines; None when it is missing. Raises ValueError when it is not text."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return data.decode("utf-8").splitlines()   # UnicodeDecodeError is a ValueError


def _unreadable(path: str, exc: Exception, fallback: str) -> None:
    log.warning("checkpoint_unreadable", path=path, reason=str(exc)[:200], fallback=fallback)


def recovery_points(path: str) -> dict[tuple[str, int], int]:
    """Kafka's OffsetCheckpointFile (version 0, a count, ``topic partition offset`` lines); an
    unreadable file resets every recovery point to 0, so every segment is recovered."""
    try:
        lines = read_lines(path)
        if lines is None:
            return {}
        if len(lines) < 2 or lines[0].strip() != "0" or int(lines[1]) != len(lines) - 2:
            raise ValueError(f"expected version 0 and {lines[1:2]} entries, found {len(lines) - 2}")
        points = {}
        for line in lines[2:]:
            topic, partition, offset = line.rsplit(" ", 2)
            points[(topic, int(partition))] = int(offset)
        return points
    except ValueError as exc:
        _unreadable(path, exc, "recovery points reset to 0: every segment is recovered")
        return {}


def log_start(path: str) -> tuple[int, int] | None:
    """(log start offset, high watermark) from a partition's ``log-start-offset`` file."""
    try:
        lines = read_lines(path)
        if lines is None:
            return None
        numbers = [int(x) for x in lines if x.strip()]
        if not 1 <= len(numbers) <= 2 or min(numbers) < 0:
            raise ValueError(f"expected one or two offsets, found {numbers[:3]}")
        return numbers[0], numbers[1] if len(numbers) > 1 else 0
    except ValueError as exc:
        _unreadable(path, exc, "the log starts at its first segment")
        return None


def leader_epochs(path: str) -> list[tuple[int, int]] | None:
    """(epoch, start offset) entries of a ``leader-epoch-checkpoint`` (None: missing, unreadable or empty)."""
    try:
        lines = read_lines(path)
        if lines is None or len(lines) < 2:
            return None
        entries = []
        for line in lines[2:]:
            if line.strip():
                epoch, start = line.split()
                entries.append((int(epoch), int(start)))
        return entries or None
    except ValueError as exc:
        _unreadable(path, exc, "leader epochs rebuilt from the batches")
        return None


def topics(path: str, meta_name: str) -> list[dict] | None:
    """The topics of ``topics.json`` (None: there is none, nor any partition directory: a new
    data directory). When it does not parse, or is missing beside partition directories (its
    first write refused by a full disk, then a kill), the topics are found from the partition
    directories as Kafka finds its logs (``<topic>-<partition>``): their records are kept, their
    configs and ids are not (logged); the internal topics are made internal again by the broker
    as it starts."""
    meta_path = os.path.join(path, meta_name)
    try:
        with open(meta_path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        counts = _partition_dirs(path)
        if not counts:
            return None
        return _rebuilt(counts, "topics_file_missing", path=meta_path)
    try:
        found = json.loads(data)["topics"]
        for t in found:
            if not (isinstance(t["name"], str) and isinstance(t["partitions"], int) and isinstance(t["configs"], dict)):
                raise ValueError(f"not a topic entry: {t!r}"[:200])
            bytes.fromhex(t["id"])
        return found
    except (ValueError, KeyError, TypeError) as exc:
        return _rebuilt(_partition_dirs(path), "topics_file_unreadable", path=meta_path, reason=str(exc)[:200])


def _partition_dirs(path: str) -> dict[str, int]:
    """topic -> partitions, from the ``<topic>-<partition>`` directories (up to the highest one)."""
    counts: dict[str, int] = {}
    for entry in sorted(os.listdir(path)):
        m = _PARTITION_DIR.match(entry)
        if m and os.path.isdir(os.path.join(path, entry)):
            counts[m.group(1)] = max(counts.get(m.group(1), 0), int(m.group(2)) + 1)
    return counts


def _rebuilt(counts: dict[str, int], event: str, **fields) -> list[dict]:
    log.warning(event, **fields, fallback="topics found from the partition directories; their configs are lost",
                topics=sorted(counts))
    return [{"name": name, "partitions": n, "configs": {}, "internal": False, "id": None}
            for name, n in counts.items()]
