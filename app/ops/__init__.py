"""The writes the screens start, each a job that returns what it changed (`StudyChanges`).

Reads live in `meaningbench.queries`; everything that changes a study lives here, one
module per write: `rate` (a rating and its undo), `importing`, `score` (the battery),
`merge`, `labels` (the audit's fix and the choice of label set), `train`, `sweep`,
`settings`, `scenes`, `kits` (rater kits made, collected and sent back), `campaign`
(top-up kits from the Campaign page), `demo` (the demo study built) and `shards` (scoring
beyond one machine, for the command line). Each is a
plain job (`job(ctx: JobContext)`, see `meaningbench.runtime`) that opens the study
itself (or, for the instant writes a keystroke makes, is handed the screen's open
session) and returns a `StudyChanges`, or a `Wrote(value, changes)` when its
screen needs a result besides (an import's report). The app's `JobRunner` broadcasts the
changes once to every screen; the command line runs the same jobs with a terminal bar.

Heavy writes run in a child process (`meaningbench.ops.child_process`) so the window's
thread never competes with them. The jobs here are module-level functions `f(ctx, ...)`,
pickled by name into the child, and Qt-free, so the child never loads Qt.
"""
