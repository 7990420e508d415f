from kafkaemu.core.timers import Timers


def test_fires_due_timers_in_deadline_order_and_not_early():
    t, fired = Timers(), []
    t.schedule("b", 200, lambda: fired.append("b"))
    t.schedule("a", 100, lambda: fired.append("a"))
    assert t.poll(99) == 0 and fired == []
    assert t.next_deadline() == 100
    assert t.poll(250) == 2
    assert fired == ["a", "b"]
    assert t.next_deadline() is None


def test_rescheduling_a_key_replaces_its_timer():
    t, fired = Timers(), []
    t.schedule("k", 100, lambda: fired.append(1))
    t.schedule("k", 300, lambda: fired.append(2))
    assert t.next_deadline() == 300
    t.poll(200)
    assert fired == []
    t.poll(300)
    assert fired == [2]
    assert len(t) == 0


def test_cancel_and_callbacks_that_schedule_more_work():
    t, fired = Timers(), []
    t.schedule("x", 10, lambda: fired.append("x"))
    t.cancel("x")
    assert not t.is_scheduled("x") and t.next_deadline() is None

    def chain():
        fired.append("first")
        t.schedule("second", 20, lambda: fired.append("second"))   # already due: same poll
        t.schedule("later", 500, lambda: fired.append("later"))
    t.schedule("first", 10, chain)
    t.poll(50)
    assert fired == ["first", "second"]
    assert t.deadline("later") == 500


def test_a_callback_that_raises_is_contained_and_later_timers_still_fire():
    t, fired = Timers(), []

    def boom():
        raise RuntimeError("bug")
    t.schedule("a", 10, lambda: fired.append("a"))
    t.schedule("bad", 20, boom)
    t.schedule("c", 30, lambda: fired.append("c"))
    assert t.poll(30) == 3
    assert fired == ["a", "c"] and len(t) == 0


def test_a_timer_pushed_later_many_times_keeps_one_heap_entry_and_fires_once_at_its_last_deadline():
    t = Timers()
    fired = []
    for now in range(10000):   # a member heartbeating: its session deadline moves out each time
        t.schedule(("session", "g", "m"), now + 45000, lambda: fired.append("session"))
    assert len(t._heap) == 1
    assert t.next_deadline() == 9999 + 45000
    assert t.poll(9999 + 44999) == 0 and fired == []
    assert t.poll(9999 + 45000) == 1 and fired == ["session"]
    assert t.next_deadline() is None


def test_timers_due_together_fire_in_the_order_they_were_last_scheduled():
    t = Timers()
    order = []
    t.schedule("a", 100, lambda: order.append("a"))
    t.schedule("b", 100, lambda: order.append("b"))
    t.schedule("c", 50, lambda: order.append("c"))
    t.schedule("c", 100, lambda: order.append("c"))   # moved later: now after a and b
    t.schedule("a", 100, lambda: order.append("a"))   # scheduled again at the same time: last
    t.schedule("d", 20, lambda: order.append("d"))
    t.schedule("d", 10, lambda: order.append("d"))    # moved earlier
    assert t.poll(100) == 4
    assert order == ["d", "b", "c", "a"]


def test_timers_rescheduled_before_time_passes_leave_the_heap_bounded_by_the_live_timers():
    t, fired = Timers(), []
    members = [("heartbeat", "g", f"m{i}") for i in range(100)]
    for beat in range(50):   # every member heartbeats 50 times, each pushing its session back
        for key in members:
            t.schedule(key, 45_000 + beat * 3_000, lambda key=key: fired.append(key))
    assert len(t) == 100
    assert t.heap_entries <= 2 * len(t) + 64
    assert t.next_deadline() == 45_000 + 49 * 3_000
    assert t.poll(45_000 + 49 * 3_000) == 100 and fired == members   # each once, in scheduling order


def test_cancelled_far_timers_leave_the_heap_bounded():
    t, fired = Timers(), []
    for generation in range(20):   # 20 waves of 500 connections, each closed before its idle check
        for c in range(500):
            t.schedule(("connection-idle", generation, c), 600_000, lambda: fired.append("idle"))
        for c in range(500):
            t.cancel(("connection-idle", generation, c))
    t.schedule(("session",), 45_000, lambda: fired.append("session"))
    assert len(t) == 1 and t.heap_entries <= 2 * len(t) + 64
    assert t.next_deadline() == 45_000
    assert t.poll(600_000) == 1 and fired == ["session"]


def test_timers_fire_in_deadline_order_across_heap_rebuilds():
    t, fired = Timers(), []
    for round_ in range(20):   # cancellations and reschedules force several rebuilds
        for i in range(50):
            key = ("session", i)
            if (i + round_) % 7 == 0:
                t.cancel(key)
            else:
                t.schedule(key, 1_000 * (50 - i) + round_, lambda i=i: fired.append(i))
    expected = sorted((t.deadline(("session", i)), i) for i in range(50) if t.is_scheduled(("session", i)))
    assert t.poll(10**9) == len(expected)
    assert fired == [i for _, i in expected]


def test_many_groups_sessions_all_expire_in_one_poll():
    t, expired = Timers(), []
    for g in range(1_000):
        for m in range(10):
            t.schedule(("heartbeat", f"group-{g}", f"m{m}"), 10_000 + g, lambda g=g, m=m: expired.append((g, m)))
    t.schedule(("heartbeat", "group-0", "m0"), 99_999, lambda: expired.append("late"))   # rescheduled
    assert t.poll(20_000) == 9_999
    assert len(set(expired)) == 9_999 and ("late" not in expired)
    assert [g for g, _ in expired] == sorted(g for g, _ in expired)
    assert t.next_deadline() == 99_999


def test_a_callback_whose_scheduling_rebuilds_the_heap_leaves_the_poll_under_way_correct():
    t, fired = Timers(), []

    def churn():   # a callback opening and closing many connections: their idle checks go stale
        fired.append("churn")
        for i in range(200):
            t.schedule(("idle", i), 600_000, lambda: fired.append("idle"))
            t.cancel(("idle", i))
        for i in range(3):
            t.schedule(("session", i), 50 + i, lambda i=i: fired.append(i))

    t.schedule("churn", 10, churn)
    t.schedule("later", 20, lambda: fired.append("later"))
    assert t.poll(1_000) == 2 + 3
    assert fired == ["churn", "later", 0, 1, 2]
    assert len(t) == 0 and t.next_deadline() is None


def _periodic(t: Timers, key, every: int, fired: list, now: list) -> None:
    """A check that schedules its next run ``every`` ms after the time it ran at (as the
    coordinators' retention and transaction checks do)."""
    def run():
        fired.append(now[0])
        t.schedule(key, now[0] + every, run, every_ms=every)
    t.schedule(key, now[0] + every, run, every_ms=every)


def test_a_periodic_check_that_missed_many_periods_fires_once_at_the_last_of_them():
    t, fired, now = Timers(), [], [0]
    _periodic(t, "check", 10_000, fired, now)
    assert t.poll(10**11, on_time=lambda at: now.__setitem__(0, at)) == 1
    assert fired == [10**11]                       # the last deadline the poll reached, not 10,000,000 runs
    assert t.next_deadline() == 10**11 + 10_000


def test_a_periodic_check_keeps_its_period_when_polled_once_per_period():
    t, fired, now = Timers(), [], [0]
    _periodic(t, "check", 100, fired, now)
    for at in (100, 150, 200, 299, 300):
        t.poll(at, on_time=lambda d: now.__setitem__(0, d))
    assert fired == [100, 200, 300]
    t.poll(550, on_time=lambda d: now.__setitem__(0, d))   # 400 and 500 missed: runs once, at 500
    assert fired == [100, 200, 300, 500] and t.next_deadline() == 600
    t.cancel("check")
    assert t.next_deadline() is None


def test_postponing_a_timer_keeps_its_callback_and_orders_it_as_scheduled_again():
    t, fired = Timers(), []
    assert not t.postpone("k", 100) and not t.is_scheduled("k")   # none to postpone
    t.schedule("k", 100, lambda: fired.append("k"))
    t.schedule("other", 200, lambda: fired.append("other"))
    assert not t.postpone("k", 50) and t.deadline("k") == 100    # never earlier
    assert t.postpone("k", 200)                                  # after "other": scheduled later
    t.poll(199)
    assert fired == []
    t.poll(200)
    assert fired == ["other", "k"]
    entry_before = (t.schedule("s", 100, lambda: fired.append("s")), t.entry("s"))[1]
    assert t.postpone("s", 500)
    t.restore("s", entry_before)                                 # a failed write puts it back
    t.poll(100)
    assert fired[-1] == "s"
