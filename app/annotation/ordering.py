"""Queue order: no two items from the same source back to back, repeats well after originals.

Pure functions over plain values so that the rules can be tested without a study file.
Two outputs of one source shown in a row invite the rater to compare them rather than
judge each against its source, and a repeat shown right after its original measures
short-term memory, not consistency.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, deque
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def spread_groups(items: Sequence[T], group_of: Callable[[T], Hashable]) -> list[T]:
    """Reorder `items` so that neighbours never share a group, when that is possible.

    Keeps the given (already shuffled) order as far as it can: at each step it takes the
    earliest remaining item whose group differs from the previous one, except when the
    largest group has so many items left that it must take every other slot from now on
    (then that group goes next). This is the greedy rule that always finds an arrangement
    if one exists; when none exists (one group holds more than half), the leftovers of that
    group come last.
    """
    n = len(items)
    groups = [group_of(x) for x in items]
    counts = Counter(groups)
    by_group: dict[Hashable, deque[int]] = {}
    for i, g in enumerate(groups):
        by_group.setdefault(g, deque()).append(i)
    # Max-heap of (-count, first index, group), lazily refreshed.
    heap = [(-c, by_group[g][0], g) for g, c in counts.items()]
    heapq.heapify(heap)
    taken = [False] * n
    order: list[int] = []
    start = 0
    prev: Hashable = object()

    def largest() -> tuple[int, Hashable] | None:
        while heap:
            c, _, g = heap[0]
            if counts[g] == -c and counts[g] > 0:
                return -c, g
            heapq.heappop(heap)
        return None

    def take(i: int) -> None:
        g = groups[i]
        taken[i] = True
        order.append(i)
        dq = by_group[g]
        while dq and taken[dq[0]]:
            dq.popleft()
        counts[g] -= 1
        if counts[g] > 0:
            heapq.heappush(heap, (-counts[g], dq[0], g))

    for left in range(n, 0, -1):
        top = largest()
        if top is not None and top[0] > left // 2 and top[1] != prev:
            take(by_group[top[1]][0])
        else:
            while start < n and taken[start]:
                start += 1
            j = start
            while j < n and (taken[j] or groups[j] == prev):
                j += 1
            take(j if j < n else start)
        prev = groups[order[-1]]
    return [items[i] for i in order]


def repeat_gap(n: int) -> int:
    """How many entries at least between an item and its repeat (a fifth of the queue)."""
    return max(10, n // 5)


def insert_repeats(
    order: Sequence[T],
    repeats: Sequence[tuple[T, T]],
    group_of: Callable[[T], Hashable],
    rng: random.Random,
    *,
    min_gap: int | None = None,
) -> list[T]:
    """Insert each (repeat, original) at a random place at least `min_gap` after the original.

    Where the queue is too short for the gap the repeat goes last. A place next to an item
    of the repeat's source group (a repeat shares its original's source) moves on to the
    next free one, which only ever widens the gap.
    """
    n = len(order)
    gap = repeat_gap(n) if min_gap is None else min_gap
    index = {id(x): i for i, x in enumerate(order)}
    # Repeats that go just before order[i] (i == n: at the end), in the order drawn.
    before: dict[int, list[tuple[T, T]]] = {}
    for rep, orig in repeats:
        lo = index[id(orig)] + gap + 1
        at = rng.randint(lo, n) if lo <= n else n
        before.setdefault(at, []).append((rep, orig))
    out: list[T] = []
    carried: list[tuple[T, T]] = []
    for i in range(n + 1):
        carried.extend(before.get(i, ()))
        nxt = group_of(order[i]) if i < n else None
        still: list[tuple[T, T]] = []
        for pair in carried:
            g = group_of(pair[0])
            if (not out or group_of(out[-1]) != g) and nxt != g:
                out.append(pair[0])
            else:
                still.append(pair)
        carried = still
        if i < n:
            out.append(order[i])
    for rep, orig in carried:
        out.insert(_last_fit(out, rep, orig, group_of, gap), rep)
    return out


def _last_fit(out: list[T], rep: T, orig: T, group_of: Callable[[T], Hashable], gap: int) -> int:
    """The latest place `gap` after `orig` between items of other groups (else the end).

    The gap wins over the neighbour rule when both cannot hold: a repeat seen too soon is
    worthless as a consistency check, a neighbour of the same source only a nuisance.
    """
    g = group_of(rep)
    first = next(i for i, x in enumerate(out) if x is orig) + gap + 1
    for at in range(len(out), first - 1, -1):
        if group_of(out[at - 1]) != g and (at == len(out) or group_of(out[at]) != g):
            return at
    return len(out)


def back_to_back(items: Sequence[T], group_of: Callable[[T], Hashable]) -> int:
    """How many neighbouring pairs share a group (0 for a well-spread queue)."""
    return sum(1 for a, b in zip(items, items[1:], strict=False) if group_of(a) == group_of(b))
