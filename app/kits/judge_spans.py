"""The judge's spans in a kit: every item has them, or none does, and they do not tell a
control from a regular item.

A study that pre-fills the ESA screen (`AnnotationSettings.esa_prefill`) hands each kit the
judge's scores of its items, which the kit's screen reads its proposals from. The judge
scores the items the study holds when it runs, and a queue's hidden controls are made
when the queue is built, usually after the judge ran: those controls would be the kit's
only items without proposals, on the screen and in the file. A kit holding controls is
therefore made only when the judge has scored all its items or none of them; otherwise
the kits are refused and the queues kept, so that scoring the study again scores their
controls (only the items without a score run) and the next kits hold the same items.

In the kit, each item keeps one score of the judge (the one that counts, else its newest
failure), all under one run, the rows numbered in the kit's own item order: a control
scored in a later run than the regular items would otherwise stand apart by its run and
its row's id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.orm import Session

from meaningbench.annotation.proposals import PrefillSource
from meaningbench.core.wording import counted


def unjudged_refusal(
    s: Session, prefill: PrefillSource | None, queues: Iterable[Sequence[int]], study: Path
) -> str | None:
    """Why kits of these queues (item ids) would tell their controls by the judge's spans,
    and what to do; None when they would not (no pre-fill, or each kit judged all or none)."""
    if prefill is None:
        return None
    kinds = {int(i): str(k) for i, k in s.execute(text("SELECT id, kind FROM item"))}
    judged = set(
        s.scalars(
            text(
                "SELECT DISTINCT s.item_id FROM score s JOIN metric_run m ON m.id = s.run_id "
                "WHERE m.metric = :metric AND m.config_hash = :hash"
            ),
            {"metric": prefill.metric, "hash": prefill.config_hash},
        )
    )
    missing: set[int] = set()
    for queue in queues:
        items = set(queue)
        has_controls = any(kinds.get(i) != "regular" for i in items)
        if has_controls and items & judged and not items <= judged:
            missing |= items - judged
    if not missing:
        return None
    controls = sum(1 for i in missing if kinds.get(i) != "regular")
    which = [counted(controls, "hidden control item")] if controls else []
    if len(missing) > controls:
        which.append(counted(len(missing) - controls, "regular item"))
    return (
        f"{' and '.join(which)} in these kits have no error spans from the judge "
        f"({prefill.label}) while their other items have them: a rater would see which items "
        f"are the controls. Run {prefill.label} again (Study ▸ Run metrics…, or "
        f"meaningbench score {study} --metrics '{prefill.label}'): it scores only the items "
        "without a score, the controls the queues added among them. Then make the kits "
        "again: the raters' queues are kept, so they hold the same items. No kit was written"
    )


def blind_judge_scores(conn: sqlite3.Connection) -> None:
    """Leave one judge score per item of the kit open on `conn` (its items already made
    blind), all under the newest run, the rows numbered in the kit's item order."""
    run = conn.execute("SELECT MAX(id) FROM metric_run").fetchone()[0]
    if run is None:
        return
    conn.execute(
        "CREATE TEMP TABLE judge_kept AS SELECT s.* FROM score s "
        "WHERE s.id = (SELECT s2.id FROM score s2 WHERE s2.item_id = s.item_id "
        "ORDER BY s2.error IS NOT NULL, s2.run_id DESC, s2.id DESC LIMIT 1)"
    )
    conn.execute("DELETE FROM score")
    conn.execute(
        "INSERT INTO score (id, run_id, item_id, value, raw, details, error, input_hash) "
        "SELECT ROW_NUMBER() OVER (ORDER BY item_id), ?, item_id, value, raw, details, "
        "error, input_hash FROM judge_kept",
        (run,),
    )
    conn.execute("DROP TABLE judge_kept")
    conn.execute("DELETE FROM metric_run WHERE id != ?", (run,))
    # The lead's run counted the lead's items, on the lead's machine.
    conn.execute(
        "UPDATE metric_run SET n_items = (SELECT COUNT(*) FROM score), "
        "n_failed = (SELECT COUNT(*) FROM score WHERE error IS NOT NULL), "
        "owner_pid = NULL, owner_host = NULL, owner_started = NULL"
    )
