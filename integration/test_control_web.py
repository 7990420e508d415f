"""The control port's web page in a real headless browser (Debian's chromium and chromium-driver,
Selenium from PyPI): three kafka-python consumers in a group are drawn Stable with their
partitions, one leaves and the timeline shows the rebalance, the request log is switched on from
the page and filtered, hostile names stay text, and all of it arrives by polling (the page is
never reloaded). Screenshots go to .artifacts/control-web/ (gitignored).

``make browser-deps`` (run by ``make test`` as root) installs chromium and chromium-driver; where
they or selenium are missing the test skips, naming them."""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from kafkaemu.control.client import ControlClient
from kafkaemu.testing import KafkaEmulator

from .control_clients import Producer
from .group_clients import POLL_MS, SESSION_MS, ConsumerThread, _assigned, _records

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("KAFKAEMU_TEST_ARTIFACTS", REPO / ".artifacts")) / "control-web"
WAIT_S = 90
TOPIC, GROUP = "orders", "orders-group"
HOSTILE_GROUP = '<script>alert("group")</script>'
HOSTILE_CLIENT = "<img src=x onerror=alert(1)>"


def browser_paths() -> tuple[str, str]:
    """(chromium, chromedriver), or skip naming what is missing."""
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    missing = [name for name, found in (("selenium (pip: the test extra)", importlib.util.find_spec("selenium")),
                                        ("chromium (apt)", chromium), ("chromedriver (apt: chromium-driver)", driver))
               if not found]
    if missing:
        pytest.skip(f"the web page test needs {', '.join(missing)}; `make browser-deps` installs the apt packages as "
                    f"root")
    return chromium, driver


def start_browser(profile: Path, javascript: bool = True):
    chromium, driver_path = browser_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture
def browser(tmp_path):
    driver = start_browser(tmp_path / "chromium")
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def emulator():
    with KafkaEmulator(subprocess_mode=True) as e:
        yield e


def committing_consumer(bootstrap: str, client_id: str) -> ConsumerThread:
    """A kafka-python consumer of TOPIC in GROUP on its own thread, committing as it goes (polls of
    POLL_MS, as the group tests and users write them)."""
    from kafka import KafkaConsumer
    settings = dict(bootstrap_servers=bootstrap, group_id=GROUP, client_id=client_id, session_timeout_ms=SESSION_MS,
                    heartbeat_interval_ms=500, auto_offset_reset="earliest", enable_auto_commit=True,
                    auto_commit_interval_ms=200)
    return ConsumerThread(lambda: KafkaConsumer(TOPIC, **settings), lambda c: _records(c.poll(timeout_ms=POLL_MS)),
                          _assigned, lambda c: c.close(), client_id)


def screenshot(driver, name: str) -> Path:
    """The whole page (the window made as tall as the document) as .artifacts/control-web/NAME.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(max(height, 600), 8000))
    assert driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)
    print(f"screenshot: {path}")
    return path


GROUP_CARD = """
const card = Array.from(document.querySelectorAll("article.group")).find(a => a.dataset.group === arguments[0]);
if (!card) return null;
return {state: card.dataset.state, members: Number(card.dataset.members), text: card.innerText,
        clients: Array.from(card.querySelectorAll("tr.member"), tr => tr.dataset.client),
        cells: Array.from(card.querySelectorAll("li.part"),
                          li => [li.closest(".topic-row").dataset.topic, Number(li.dataset.partition), li.dataset.owner,
                                 li.querySelector(".owner").textContent])};
"""
TIMELINE_LANE = """
const lane = Array.from(document.querySelectorAll("svg.timeline g.lane")).find(g => g.dataset.group === arguments[0]);
if (!lane) return null;
return {segments: Array.from(lane.querySelectorAll("rect.seg"),
                             r => [r.dataset.state, Number(r.dataset.generation), Number(r.dataset.members)]),
        left: Array.from(lane.querySelectorAll("text.mark.left"), t => t.dataset.left),
        joined: Array.from(lane.querySelectorAll("text.mark.joined"), t => t.dataset.joined),
        transitions: Array.from(document.querySelectorAll("table.transitions tbody tr"))
                          .filter(tr => tr.dataset.group === arguments[0])
                          .map(tr => [tr.cells[3].innerText, tr.cells[7].innerText])};
"""
REQUEST_ROWS = """
return Array.from(document.querySelectorAll("table.requests tbody tr"),
                  tr => [tr.cells[5].textContent, tr.cells[6].textContent]);
"""


def wait_for(driver, condition, what: str):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        return WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(lambda d: condition(d))
    except TimeoutException:
        screenshot(driver, "timed-out")
        raise AssertionError(f"the page did not show {what} within {WAIT_S} s") from None


def stable_with(members: int):
    def check(driver):
        card = driver.execute_script(GROUP_CARD, GROUP)
        if not card or card["state"] != "Stable" or card["members"] != members:
            return False
        owners = {owner for _, _, owner, _ in card["cells"]}
        drawn = sorted((topic, p) for topic, p, owner, _ in card["cells"] if owner)
        return card if len(owners) == members and drawn == [(TOPIC, p) for p in range(6)] else False
    return check


def left_and_settled(generation_before: int):
    def check(driver):
        lane = driver.execute_script(TIMELINE_LANE, GROUP)
        if not lane or not any("consumer-2" in who for who in lane["left"]):
            return False
        states = lane["segments"]
        three = [i for i, (s, _, m) in enumerate(states) if s == "Stable" and m == 3]
        if not three:
            return False
        after = states[three[-1] + 1:]
        rebalanced = any(s == "PreparingRebalance" for s, _, _ in after)
        settled = any(s == "Stable" and m == 2 and g > generation_before for s, g, m in after)
        return lane if rebalanced and settled else False
    return check


def test_the_page_draws_the_group_and_its_rebalance_live(emulator, browser):
    http = ControlClient(emulator.control_url)
    bootstrap = emulator.bootstrap_servers
    http.call("topic_create", name=TOPIC, partitions=6)
    producer = Producer("kafka-python", bootstrap, "page-producer")
    for i in range(60):
        producer.send(TOPIC, b"record-%d" % i, i % 6)
    producer.flush()
    producer.close()

    browser.get(emulator.control_url + "/")
    assert browser.title == "kafkaemu"
    browser.execute_script("window.kafkaemuTestMarker = 42")   # gone if the page were reloaded
    wait_for(browser, lambda d: d.find_element("css selector", "button[data-action=log-on]").is_displayed(),
             "the request log's start button")
    browser.find_element("css selector", "button[data-action=log-on]").click()
    wait_for(browser, lambda d: d.find_elements("css selector", "#requests-body [data-log=on]"),
             "the request log switched on")
    assert http.call("request_log_config")["enabled"]

    consumers = [committing_consumer(bootstrap, f"consumer-{i}") for i in range(3)]
    try:
        card = wait_for(browser, stable_with(3), "the group Stable with three members holding all six partitions")
        assert sorted(card["clients"]) == ["consumer-0", "consumer-1", "consumer-2"]
        assert "Stable" in card["text"] and all(f"consumer-{i}" in card["text"] for i in range(3))
        assert all(owner == label for _, _, owner, label in card["cells"])   # each cell names its holder
        generation = int(browser.execute_script(
            "return Array.from(document.querySelectorAll('article.group'))"
            ".find(a => a.dataset.group === arguments[0]).dataset.generation", GROUP))
        # the server agrees with what the page drew
        group = http.call("group", group=GROUP)
        held = {m["client_id"]: [(a["topic"], p) for a in m["assignment"] for p in a["partitions"]]
                for m in group["members"]}
        assert held == {c: sorted((t, p) for t, p, owner, _ in card["cells"] if owner == c) for c in held}
        screenshot(browser, "1-stable-three-members")

        browser.find_element("css selector", "article.group details.lag summary").click()   # folded by the reader
        assert not browser.find_element("css selector", "article.group details.lag").get_property("open")
        consumers[2].close()   # LeaveGroup: the others rebalance
        lane = wait_for(browser, left_and_settled(generation),
                        "consumer-2 leaving and the group Stable again with two members on the timeline")
        assert any(to.endswith("PreparingRebalance") and "consumer-2" in left for to, left in lane["transitions"])
        wait_for(browser, stable_with(2), "the group Stable with two members holding all six partitions")
        # the card was redrawn with two members, and what the reader folded stays folded
        assert not browser.find_element("css selector", "article.group details.lag").get_property("open")
        screenshot(browser, "2-after-consumer-2-left")
        browser.find_element("css selector", "#timeline").screenshot(str(ARTIFACTS / "3-timeline.png"))

        # the request log, filtered from the page
        api_filter = browser.find_element("css selector", "input[name=api]")
        api_filter.send_keys("Heartbeat")
        def only_heartbeats(driver):
            rows = driver.execute_script(REQUEST_ROWS)
            return rows if rows and all(api.startswith("Heartbeat ") for _, api in rows) else False
        rows = wait_for(browser, only_heartbeats, "only Heartbeat requests in the log")
        assert {client for client, _ in rows} <= {"consumer-0", "consumer-1", "consumer-2"}
        assert "api=Heartbeat" in browser.current_url
        browser.find_element("css selector", "#requests").screenshot(str(ARTIFACTS / "4-requests-heartbeat.png"))
        assert browser.execute_script("return window.kafkaemuTestMarker") == 42   # live updates, no reload
    finally:
        for c in consumers:
            if c.is_alive():
                c.close()


def test_hostile_names_are_shown_as_text(emulator, browser):
    from kafka import KafkaConsumer, TopicPartition
    from selenium.common.exceptions import NoAlertPresentException
    http = ControlClient(emulator.control_url)
    http.call("topic_create", name="plain", partitions=1)
    http.call("request_log_config", enabled=True)
    browser.get(emulator.control_url + "/")
    consumer = KafkaConsumer(bootstrap_servers=emulator.bootstrap_servers, group_id=HOSTILE_GROUP,
                             client_id=HOSTILE_CLIENT, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition("plain", 0)])
        consumer.commit({TopicPartition("plain", 0): _offset(0)})
    finally:
        consumer.close()
    shown = wait_for(browser, lambda d: d.execute_script(
        "const row = Array.from(document.querySelectorAll('table.group-list tr'))"
        ".find(tr => tr.dataset.group === arguments[0]); return row && row.cells[0].textContent", HOSTILE_GROUP),
        "the hostile group id in the group list")
    assert shown == HOSTILE_GROUP
    wait_for(browser, lambda d: any(client == HOSTILE_CLIENT for client, _ in d.execute_script(REQUEST_ROWS)),
             "the hostile client id in the request log")
    assert browser.execute_script("return document.querySelectorAll('img[src=x], main script').length") == 0
    with pytest.raises(NoAlertPresentException):
        _ = browser.switch_to.alert.text
    screenshot(browser, "5-hostile-names")


def _offset(n: int):
    from kafka.structs import OffsetAndMetadata
    try:
        return OffsetAndMetadata(n, "", -1)
    except TypeError:   # kafka-python before leader epochs
        return OffsetAndMetadata(n, "")


def test_without_javascript_the_page_reads_and_reloads_itself(emulator, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait
    driver = start_browser(tmp_path / "chromium", javascript=False)
    try:
        emulator.control("topic_create", name="first", partitions=2)
        driver.get(emulator.control_url + "/")
        assert not driver.find_element("id", "pause").is_displayed()       # only the script shows it
        assert "kafkaemu ctl requests on" in driver.find_element("id", "requests-body").text
        assert [r.text.split()[0] for r in driver.find_elements("css selector", "#topics-body th.tname")] == ["first"]
        emulator.control("topic_create", name="second", partitions=1)    # shown after the page reloads itself
        WebDriverWait(driver, 30, poll_frequency=0.2).until(
            lambda d: len(d.find_elements("css selector", "#topics-body th.tname")) == 2)
        screenshot(driver, "6-without-javascript")
    finally:
        driver.quit()
