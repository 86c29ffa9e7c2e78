"""Queue order rules, as properties over arbitrary group layouts."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from meaningbench.annotation.ordering import back_to_back, insert_repeats, repeat_gap, spread_groups


def _min_adjacent(groups: list[int]) -> int:
    """The fewest same-group neighbours any arrangement can have (hand-derived bound).

    With n items and a largest group of c, the other n - c items can separate at most
    n - c + 1 runs of that group, so c - (n - c + 1) neighbours are unavoidable.
    """
    if not groups:
        return 0
    c = max(Counter(groups).values())
    return max(0, 2 * c - len(groups) - 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 8), max_size=60))
def test_spread_reaches_the_fewest_possible_neighbours(groups: list[int]) -> None:
    items = list(enumerate(groups))
    out = spread_groups(items, lambda x: x[1])
    assert sorted(out) == sorted(items)
    assert back_to_back(out, lambda x: x[1]) == _min_adjacent(groups)


def test_spread_keeps_the_shuffled_order_when_it_can() -> None:
    items = [(0, "a"), (1, "b"), (2, "a"), (3, "c")]
    assert spread_groups(items, lambda x: x[1]) == items
    # (1, "a") must move: the next item of another group comes first.
    items = [(0, "a"), (1, "a"), (2, "b"), (3, "c")]
    assert spread_groups(items, lambda x: x[1]) == [(0, "a"), (2, "b"), (1, "a"), (3, "c")]


@settings(max_examples=100, deadline=None)
@given(st.integers(30, 200), st.integers(1, 10), st.integers(0, 2**31))
def test_repeats_come_at_least_the_gap_after_their_original(n, n_rep, seed) -> None:
    rng = random.Random(seed)
    order = [(i, i // 2) for i in range(n)]  # pairs of items share a group
    rng.shuffle(order)
    order = spread_groups(order, lambda x: x[1])
    gap = repeat_gap(n)
    # As the queue builder does: originals from the first half leave room after the gap.
    originals = rng.sample(order[: n // 2], n_rep)
    pairs = [((1000 + o[0], o[1]), o) for o in originals]
    out = insert_repeats(order, pairs, lambda x: x[1], rng)
    assert sorted(out) == sorted(order + [r for r, _ in pairs])
    pos = {x: i for i, x in enumerate(out)}
    for rep, orig in pairs:
        assert pos[rep] - pos[orig] > gap
    assert back_to_back(out, lambda x: x[1]) == 0


def test_repeat_of_a_late_item_goes_last() -> None:
    order = [(i, i) for i in range(30)]
    out = insert_repeats(order, [((99, 25), order[25])], lambda x: x[1], random.Random(0))
    assert out[-1] == (99, 25)
    assert out[:30] == order
