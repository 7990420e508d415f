"""`make compat`: franz-go's kgo integration tests, unmodified, against kafkaemu.

    python -m compat.franz_go_suite [--cache-dir DIR] [GO_TEST_ARGS...]

Takes franz-go at FRANZ_GO_VERSION, with the modules it needs, from the Go module proxy into
``.cache/compat/go-mod`` (``go mod download``, once), copies the module into a temporary directory,
starts kafkaemu in this process with the broker settings of franz-go's own CI
(compat/franz_go_settings.py) and runs ``go test ./pkg/kgo/`` there with the variables that CI gives
the tests, ``KGO_SEEDS`` pointing at kafkaemu. Prints each failed test's output and one closing line
of counts; exits with go test's status. Without Go, or without the modules and without the proxy,
it says what is missing and exits 0: a skip, never a pass.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULE = "github.com/twmb/franz-go"
# The newest release when the run was added; move it by hand and check compat/franz_go_settings.py
# (the run compares it with the release's CI workflow and stops on a difference).
FRANZ_GO_VERSION = "v1.22.3"
PACKAGE = "./pkg/kgo/"
GO_TEST_TIMEOUT = "5m"  # franz-go's CI gives `go test` 5 minutes
RUN_LIMIT_S = 600       # compiling the tests the first time, then at most GO_TEST_TIMEOUT of tests
UNREACHABLE = re.compile(r"dial tcp|no such host|i/o timeout|connection refused|network is unreachable|"
                         r"Temporary failure in name resolution|TLS handshake timeout|proxyconnect", re.I)


class Skip(Exception):
    """What is missing for the run, said instead of running it."""


def go_binary() -> str:
    go = shutil.which("go")
    if go is None:
        raise Skip("the go command is not installed (Go >= the module's go directive; Debian: golang-go)")
    return go


def go_env(cache_dir: Path) -> dict[str, str]:
    """The environment of every go command of the run: its own module cache, writable so that
    ``make clean`` can remove it, and no workspace or vendoring of an enclosing directory."""
    return {**os.environ, "GOMODCACHE": str(cache_dir / "go-mod"), "GOFLAGS": "-modcacherw -mod=mod",
            "GOWORK": "off", "GOTOOLCHAIN": "local"}


def _fail_or_skip(what: str, done: subprocess.CompletedProcess, cache_dir: Path) -> None:
    output = done.stdout + done.stderr
    if too_old := re.search(r"requires go >= ?\S+ \(running go [0-9.]+", output):   # GOTOOLCHAIN=local
        raise Skip(f"{MODULE}@{FRANZ_GO_VERSION} needs a newer go command: {too_old.group(0)})")
    if network := next((line.strip() for line in output.splitlines() if UNREACHABLE.search(line)), None):
        raise Skip(f"{what} is not in {cache_dir / 'go-mod'} and the Go module proxy cannot be reached "
                   f"({network[:300]}); run it once with the proxy reachable to fill the cache")
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "no output")
    raise SystemExit(f"compat: go could not download {what}: {last[:500]}")


def download(go: str, cache_dir: Path) -> Path:
    """franz-go's module directory in the run's module cache, downloaded (with the modules its
    tests build with) when not there yet."""
    env = go_env(cache_dir)
    (cache_dir / "go-mod").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as outside_any_module:
        done = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@{FRANZ_GO_VERSION}"],
                              cwd=outside_any_module, env=env, capture_output=True, text=True, timeout=300)
    try:
        info = json.loads(done.stdout) if done.stdout.strip() else {}
    except json.JSONDecodeError:
        info = {}
    if done.returncode != 0 or info.get("Error") or not info.get("Dir"):
        done.stderr += "\n" + str(info.get("Error", ""))
        _fail_or_skip(f"{MODULE}@{FRANZ_GO_VERSION}", done, cache_dir)
    module_dir = Path(info["Dir"])
    deps = subprocess.run([go, "mod", "download"], cwd=module_dir, env=env, capture_output=True, text=True,
                          timeout=300)
    if deps.returncode != 0:
        _fail_or_skip(f"the modules {MODULE}@{FRANZ_GO_VERSION} requires", deps, cache_dir)
    return module_dir


def check_settings(module_dir: Path) -> None:
    """The release's CI workflow must set the broker and the tests as compat/franz_go_settings.py says."""
    from compat.franz_go_settings import WORKFLOW, suite_settings_differ
    workflow = module_dir / WORKFLOW
    if not workflow.is_file():
        raise SystemExit(f"compat: {MODULE}@{FRANZ_GO_VERSION} no longer ships {WORKFLOW}; "
                         "check compat/franz_go_settings.py by hand")
    if differences := suite_settings_differ(workflow.read_text()):
        raise SystemExit("compat: franz-go's CI broker settings changed:\n  " + "\n  ".join(differences))


def tally(events: list[dict]) -> tuple[Counter, dict[str, list[str]]]:
    """Top-level tests by outcome (pass, fail, skip) from ``go test -json`` events, and each failed
    test's output (its subtests' included)."""
    outcome: dict[str, str] = {}
    output: dict[str, list[str]] = {}
    for event in events:
        test = event.get("Test")
        if not test:
            continue
        top = test.split("/")[0]
        if event.get("Action") == "output":
            output.setdefault(top, []).append(event.get("Output", ""))
        elif event.get("Action") in ("pass", "fail", "skip") and test == top:
            outcome[top] = event["Action"]
    counts = Counter(outcome.values())
    return counts, {test: output.get(test, []) for test, result in outcome.items() if result == "fail"}


def summary_line(counts: Counter) -> str:
    return (f"franz-go {FRANZ_GO_VERSION} kgo: {counts['pass']} passed, {counts['fail']} failed, "
            f"{counts['skip']} skipped")


def run_suite(go: str, root: Path, cache_dir: Path, bootstrap: str, go_test_args: list[str]) -> int:
    from compat.franz_go_settings import test_environment
    env = {**go_env(cache_dir), **test_environment(bootstrap)}
    command = [go, "test", "-json", "-count=1", f"-timeout={GO_TEST_TIMEOUT}", *go_test_args, PACKAGE]
    events: list[dict] = []
    proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                print(line, end="")   # go's own messages (a build failure) are not JSON
        status = proc.wait(RUN_LIMIT_S)
    except subprocess.TimeoutExpired:
        print(f"compat: go test ran past {RUN_LIMIT_S} s and was stopped", file=sys.stderr)
        status = 1
    finally:   # stopped, interrupted or failed here: go test does not outlive the broker it tests
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    counts, failed = tally(events)
    for test, lines in failed.items():
        print(f"--- {test} failed:\n{''.join(lines)}", end="")
    print(summary_line(counts), flush=True)
    if status == 0 and counts["pass"] == 0:
        print("compat: no test passed; a run that skipped everything proves nothing", file=sys.stderr)
        return 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.franz_go_suite", description=__doc__.split("\n")[0])
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".cache" / "compat",
                        help="where the Go modules are kept (default .cache/compat, in go-mod/)")
    args, go_test_args = parser.parse_known_args(argv)
    try:
        go = go_binary()
        module_dir = download(go, args.cache_dir)
    except Skip as missing:
        print(f"compat: SKIPPED franz-go {FRANZ_GO_VERSION}'s kgo integration tests: {missing}")
        return 0
    check_settings(module_dir)
    from compat.franz_go_settings import broker_config
    from kafkaemu.testing import KafkaEmulator
    with tempfile.TemporaryDirectory(prefix="kafkaemu-compat-franz-go-") as work:
        root = Path(work) / "franz-go"
        shutil.copytree(module_dir, root)   # the module cache is the cache's; go test runs in a copy
        with KafkaEmulator(config=broker_config()) as kafka:
            print(f"compat: franz-go {FRANZ_GO_VERSION}'s {PACKAGE} tests against kafkaemu at "
                  f"{kafka.bootstrap_server}", flush=True)
            return run_suite(go, root, args.cache_dir, kafka.bootstrap_server, go_test_args)


if __name__ == "__main__":
    sys.exit(main())
