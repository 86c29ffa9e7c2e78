"""Annotation sessions: queues, submissions, undo, skips and flags — Qt-free.

- `settings`: the study's annotation protocol (dimensions, overlap, QC mix, seed, guidelines);
- `queue`: per-annotator queues with hidden control items (`qc_items`) in a fixed order
  (`ordering`);
- `session`: `AnnotationSession`, the engine behind the rating screen;
- `merge`: bring another copy's ratings in without overwriting anything;
- `diff`: word-level differences for the optional highlighting.
"""
