"""The Java orders the sticky assignor's ties depend on (core/streams/assignor_java.py), checked
against Java itself: java/JavaOrders.java builds the same HashMaps and PriorityQueues (``addAll``,
``poll``, ``add``, as Kafka's assignor calls them on Java 17-25) and prints their orders."""
from __future__ import annotations

import random
import shutil
import string
import subprocess
import uuid
from pathlib import Path

import pytest

from kafkaemu.core.streams.assignor_java import JavaPriorityQueue, hash_map_order, string_hash, utf16_key

ORACLE = Path(__file__).parent / "java" / "JavaOrders.java"


def java_answers(lines: list[str]) -> list[str]:
    if shutil.which("java") is None:
        pytest.skip("the Java order checks need `java` (a JDK 11+) on PATH")
    out = subprocess.run(["java", str(ORACLE)], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, encoding="utf-8", check=True)
    return out.stdout.splitlines()


def random_key(rng: random.Random) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    if kind == 1:
        return f"member{rng.randrange(2000)}"
    if kind == 2:
        return "".join(rng.choice(string.ascii_letters + string.digits + "-_") for _ in range(rng.randrange(1, 12)))
    return "".join(rng.choice("aé€𝄞Zz0") for _ in range(rng.randrange(1, 6)))   # non-ASCII, astral too


def colliding(n: int) -> list[str]:
    """``n`` distinct strings of one hashCode ("Aa" and "BB" hash alike)."""
    return ["".join("Aa" if (i >> b) & 1 else "BB" for b in range(4)) for i in range(n)]


def hash_cases() -> list[tuple[int | None, list[str]]]:
    rng = random.Random(1071)
    cases: list[tuple[int | None, list[str]]] = []
    for _ in range(150):
        keys = [random_key(rng) for _ in range(rng.choice([0, 1, 2, 5, 13, 40, 100, 700]))]
        keys += rng.sample(keys, min(len(keys), 3))                      # re-puts keep their place
        cases.append((rng.choice([None, 0, 1, 3, 16, 100, len(keys)]), keys))
    for n in (8, 9, 10):          # a crowded bin grows a small table (not a size-driven growth here)
        cases.append((None, colliding(n) + [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(12)]))
    return cases


def test_string_hash_is_javas():
    assert string_hash("") == 0
    assert string_hash("Aa") == string_hash("BB") == 2112
    assert string_hash("member1") == 948881623
    assert string_hash("hello world") == 1794106052          # Java: 1794106052


def test_hash_map_order_is_javas():
    cases = hash_cases()
    answers = java_answers([f"H {-1 if cap is None else cap} {' '.join(keys)}".rstrip() for cap, keys in cases])
    assert len(answers) == len(cases)
    for (cap, keys), answer in zip(cases, answers):
        assert hash_map_order(keys, cap) == (answer.split(" ") if answer else []), (cap, keys)


def test_priority_queue_order_is_javas():
    rng = random.Random(848)
    cases = []
    for _ in range(200):
        values = [rng.randrange(4) for _ in range(rng.randrange(1, 40))]
        deltas = [rng.choice([-1, 0, 1, 1, 2]) for _ in range(rng.randrange(0, 80))]
        cases.append((values, deltas))
    answers = java_answers([f"Q {' '.join(map(str, v))} ; {' '.join(map(str, d))}".rstrip() for v, d in cases])
    for (values, deltas), answer in zip(cases, answers):
        elements = [[i, v] for i, v in enumerate(values)]
        queue = JavaPriorityQueue(lambda e: e[1], elements)
        polled = []
        for d in deltas:
            e = queue.poll()
            if e is None:
                polled.append("null")
                continue
            polled.append(str(e[0]))
            if d >= 0:
                e[1] += d
                queue.offer(e)
        assert " ".join(polled) == answer, (values, deltas)


def test_utf16_key_orders_as_string_compare_to():
    # Java compares UTF-16 code units: U+FFFF sorts after U+1D11E (a surrogate pair starting 0xD834).
    assert utf16_key("\U0001d11e") < utf16_key("\uffff")
    assert sorted(["b", "a", "ab", ""], key=utf16_key) == ["", "a", "ab", "b"]
