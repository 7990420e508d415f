"""The control port's web page as the server renders it (what a browser without JavaScript shows):
groups with members and who holds which partition, lag, the rebalance timeline with who joined
and left, the request log and its filters, and every client-chosen name escaped."""
from __future__ import annotations

from html.parser import HTMLParser

from kafkaemu.control.web import render_page
from kafkaemu.control.web_timeline import membership_changes
from kafkaemu.protocol.api_keys import ApiKey

from .harness import Env

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Element:
    def __init__(self, tag: str, attrs: dict) -> None:
        self.tag, self.attrs, self.text, self.children = tag, attrs, "", []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def find(self, tag: str, cls: str | None = None, **attrs) -> list[Element]:
        """Descendants with this tag (``*``: any), class and attribute values (``data_x`` for data-x)."""
        found = []
        for child in self.children:
            if ((tag in ("*", child.tag)) and (cls is None or cls in child.classes)
                    and all(child.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())):
                found.append(child)
            found += child.find(tag, cls, **attrs)
        return found

    def one(self, tag: str, cls: str | None = None, **attrs) -> Element:
        [element] = self.find(tag, cls, **attrs)
        return element


class Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.open = [self.root]

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.open[-1].children.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, 0, -1):
            if self.open[i].tag == tag:
                del self.open[i:]
                return

    def handle_data(self, data):
        for element in self.open:
            element.text += data


def page(env: Env, query: str = "") -> tuple[str, Element]:
    text = render_page(env.control, query).decode()
    tree = Tree()
    tree.feed(text)
    return text, tree.root


def test_a_group_is_drawn_with_its_state_members_partitions_and_lag():
    env = Env()
    a, mid_a, _, _, gen = env.two_member_group(partitions=4)
    producer = env.client("p")
    for p in range(4):
        producer.produce("t", p, [b"x"] * (p + 1))
    a.commit("g", "t", {0: 1, 1: 1}, gen, mid_a)
    _, doc = page(env)
    card = doc.one("article", "group", data_group="g")
    assert (card.attrs["data-state"], card.attrs["data-members"], card.attrs["data-generation"]) == ("Stable", "2", "2")
    assert "Stable" in card.one("h3").text and "generation 2" in card.text
    rows = {r.attrs["data-client"]: r for r in card.find("tr", "member")}
    assert set(rows) == {"a", "b"} and "leader" in rows["a"].text and "leader" not in rows["b"].text
    assert "t: 0, 1" in rows["a"].text and "t: 2, 3" in rows["b"].text
    cells = card.one("div", "topic-row", data_topic="t").find("li", "part")
    assert [(c.attrs["data-partition"], c.attrs["data-owner"]) for c in cells] == [
        ("0", "a"), ("1", "a"), ("2", "b"), ("3", "b")]
    assert [c.one("span", "lag").text for c in cells] == ["lag 0", "lag 1", "lag 3", "lag 4"]
    colour = {r.attrs["data-client"]: r.one("span", "swatch").classes - {"swatch"} for r in rows.values()}
    assert colour["a"] != colour["b"] and cells[0].classes - {"part"} == colour["a"]   # drawn in the member's colour
    lag_rows = [[td.text for td in tr.find("td")] for tr in card.one("table", "offsets").find("tr")[1:]]
    assert lag_rows == [["t", "0", "a", "1", "1", "0"], ["t", "1", "a", "1", "2", "1"],
                        ["t", "2", "b", "", "3", "3"], ["t", "3", "b", "", "4", "4"]]
    topic_rows = doc.one("div", None, id="topics-body").find("tr", data_topic="t")
    assert [tr.find("td")[4].text for tr in topic_rows] == ["1", "2", "3", "4"]   # high watermarks
    listed = doc.one("table", "group-list").one("tr", data_group="g")
    assert [td.text for td in listed.find("td")][:6] == ["g", "classic", "Stable", "2", "2", "8"]


def test_the_timeline_draws_states_generations_and_who_joined_and_left():
    env = Env()
    env.two_member_group()
    env.clock.advance(5000)
    env.op("expire_member", group="g", client_id="b")
    _, doc = page(env)
    lane = doc.one("g", "lane", data_group="g")
    segments = [(r.attrs["data-state"], r.attrs["data-generation"], r.attrs["data-members"])
                for r in lane.find("rect", "seg")]
    assert segments == [("PreparingRebalance", "0", "1"), ("CompletingRebalance", "1", "1"),
                        ("PreparingRebalance", "1", "2"), ("CompletingRebalance", "2", "2"), ("Stable", "2", "2"),
                        ("PreparingRebalance", "2", "1")]
    assert [t.attrs["data-joined"] for t in lane.find("text", "joined")] == ["a", "b"]
    assert [t.attrs["data-left"] for t in lane.find("text", "left")] == ["b"]
    assert lane.one("text", "left").text.startswith("−b")
    xs = [float(r.attrs["x"]) for r in lane.find("rect", "seg")]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)        # every transition has room, in order
    widths = [float(r.attrs["width"]) for r in lane.find("rect", "seg")]
    assert widths[4] > widths[3]                               # five seconds Stable: wider than an instant
    newest = doc.one("table", "transitions").find("tr", data_group="g")[0]
    assert [td.text for td in newest.find("td")][2:] == ["g", "Stable → PreparingRebalance", "2", "1", "", "b"]


def test_membership_changes_count_a_first_entry_as_joined_only_from_empty():
    def entry(seq, group, frm, ids):
        return {"seq": seq, "group": group, "from": frm, "members": [{"member_id": i, "client_id": i} for i in ids]}
    changes = membership_changes([entry(1, "g", "Empty", ["a"]), entry(2, "h", "Stable", ["x"]),
                                  entry(3, "g", "Stable", ["a", "b"]), entry(4, "h", "PreparingRebalance", [])])
    assert {seq: ([m["member_id"] for m in j], [m["member_id"] for m in left]) for seq, (j, left) in changes.items()} \
        == {1: (["a"], []), 3: (["b"], []), 4: ([], ["x"])}


HOSTILE_GROUP = '<script>alert("g")</script>'
HOSTILE_CLIENT = '"><img src=x onerror=alert(1)>'


def test_names_clients_chose_are_escaped_everywhere():
    env = Env()
    env.op("request_log_config", enabled=True)
    env.broker.topics.create("t", 2, {})
    env.client(HOSTILE_CLIENT).commit(HOSTILE_GROUP, "t", {0: 1})
    member = env.client(HOSTILE_CLIENT, env.broker.placement.group_coordinator("g&<b>"))
    member.join("g&<b>")
    member.join("g&<b>", member.replies()[-1].member_id)       # a member: the group rebalances
    text, doc = page(env, "client_id=" + HOSTILE_CLIENT.replace("&", "%26"))
    assert "<script>alert" not in text and "<img src=x" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(&quot;g&quot;)&lt;/script&gt;" in text
    assert not doc.find("img", src="x") and all(s.attrs.get("src") == "/ui/page.js" for s in doc.find("script"))
    # each name reads back as it was given
    assert doc.one("table", "group-list").one("tr", data_group=HOSTILE_GROUP).find("td")[0].text == HOSTILE_GROUP
    assert doc.one("article", "group", data_group="g&<b>").one("tr", "member").attrs["data-client"] == HOSTILE_CLIENT
    assert doc.one("g", "lane", data_group="g&<b>").one("text", "joined").attrs["data-joined"] == HOSTILE_CLIENT
    clients = {tr.one("td", "client").text for tr in doc.one("table", "requests").find("tr")[1:]}
    assert clients == {HOSTILE_CLIENT}
    assert doc.one("input", None, name="client_id").attrs["value"] == HOSTILE_CLIENT


def test_the_request_log_is_filtered_by_the_page_query_and_says_when_it_is_off():
    env = Env()
    _, doc = page(env)
    off = doc.one("p", None, data_log="off")
    assert "kafkaemu ctl requests on" in off.text and off.one("button").attrs["data-action"] == "log-on"
    assert not doc.find("table", "requests")
    env.op("request_log_config", enabled=True)
    a, mid_a, _, _, gen = env.two_member_group()
    a.heartbeat("g", gen, mid_a)

    def shown(query):
        _, doc = page(env, query)
        return [[td.text for td in tr.find("td")] for tr in doc.one("table", "requests").find("tr")[1:]]
    everything = shown("")
    assert {row[6].split()[0] for row in everything} >= {"JoinGroup", "SyncGroup", "Heartbeat"}
    assert [int(row[0]) for row in everything] == sorted((int(row[0]) for row in everything), reverse=True)
    heartbeats = shown("api=heartbeat")
    assert heartbeats and {row[6] for row in heartbeats} == {"Heartbeat v4"}
    assert {row[5] for row in shown("client_id=b")} == {"b"}
    errors = shown("errors=1")
    assert errors and all(row[10] for row in errors) and len(errors) < len(everything)
    assert shown("api=Heartbeat&errors=on") == [r for r in heartbeats if r[10]]
    _, doc = page(env, "api=NoSuchApi")
    assert "NoSuchApi" in doc.one("p", "error").text                    # a bad filter is said, the page stays
    assert doc.one("input", None, name="api").attrs["value"] == "NoSuchApi"


def test_an_empty_broker_renders_and_faults_are_listed():
    env = Env()
    _, doc = page(env)
    assert "No topics yet." in doc.one("div", None, id="topics-body").text
    assert "No groups yet." in doc.one("div", None, id="groups-body").text
    assert "No group has changed state yet." in doc.one("div", None, id="timeline-body").text
    env.op("fault_add", api="Heartbeat", error="NOT_COORDINATOR", count=3, client_id="x")
    _, doc = page(env)
    [rule] = doc.one("table", "faults").find("tr")[1:]
    assert [td.text for td in rule.find("td")] == ["1", "Heartbeat", "NOT_COORDINATOR", "client_id x", "0", "3"]
    assert "1 fault rule active" in doc.one("div", None, id="summary").text


def test_a_consumer_protocol_group_shows_member_state_and_assignment():
    env = Env(extra={"group.consumer.heartbeat.interval.ms": 500,
                         "group.consumer.min.heartbeat.interval.ms": 500})
    env.broker.topics.create("t", 2, {})
    reply = env.client("k").call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
        "group_id": "kip", "member_id": "m-k", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": []})
    assert reply.error_code == 0
    _, doc = page(env)
    card = doc.one("article", "group", data_group="kip")
    row = card.one("tr", "member", data_client="k")
    assert "epoch" in row.text and "t: 0, 1" in row.text
    assert [c.attrs["data-owner"] for c in card.find("li", "part")] == ["k", "k"]
