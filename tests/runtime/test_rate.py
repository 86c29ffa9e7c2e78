"""Items per second and time left, against hand-computed cases."""

from __future__ import annotations

from meaningbench.runtime.rate import RateMeter, format_duration, format_rate


def test_rate_and_eta_by_hand() -> None:
    m = RateMeter(window_s=10)
    assert m.rate() is None and m.eta_s(100) is None
    m.add(0.0, 0)
    m.add(2.0, 50)  # 25 items/s
    assert m.rate() == 25.0
    assert m.eta_s(100) == 2.0  # 50 left at 25/s
    m.add(4.0, 150)  # 150 in 4 s
    assert m.rate() == 37.5


def test_the_window_forgets_a_slow_start() -> None:
    m = RateMeter(window_s=5)
    m.add(0.0, 0)
    m.add(10.0, 10)  # model loading: 1 item/s
    for t in range(11, 21):
        m.add(float(t), 10 + (t - 10) * 100)  # then 100 items/s
    assert m.rate() == 100.0


def test_a_new_phase_restarts_the_count() -> None:
    m = RateMeter()
    m.add(0.0, 0)
    m.add(1.0, 80)
    m.add(2.0, 10)  # the next metric counts from zero again
    assert m.rate() is None
    m.add(3.0, 30)
    assert m.rate() == 20.0


def test_formatting() -> None:
    assert format_duration(None) == "–"
    assert format_duration(42.4) == "42 s"
    assert format_duration(125) == "2 min 05 s"
    assert format_duration(3 * 3600 + 120) == "3 h 02 min"
    assert format_rate(None) == "– items/s"
    assert format_rate(3.14159) == "3.1 items/s"
    assert format_rate(12345.6) == "12,346 items/s"
