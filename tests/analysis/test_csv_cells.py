"""Result tables saved as CSV (correlate --csv, the dashboard's Save as CSV) quote text a
spreadsheet would run as a formula, and leave numbers alone."""

from __future__ import annotations

import csv
import io

import pandas as pd

from meaningbench.analysis.export import to_csv


def test_formula_like_text_is_quoted_and_numbers_are_not() -> None:
    frame = pd.DataFrame(
        {
            "system": ['=HYPERLINK("http://example.invalid")', "-x", "plain", "@SUM(A1)"],
            "r": [-0.5, 0.25, 1.0, -3.5],
            "n": [-1, 2, 3, 4],
        },
        index=pd.Index(["+1", "b", "\tc", "d"], name="=rater"),
    )
    before = frame.copy()
    rows = list(csv.reader(io.StringIO(to_csv(frame))))
    assert rows[0] == ["'=rater", "system", "r", "n"]
    assert [r[0] for r in rows[1:]] == ["'+1", "b", "'\tc", "d"]
    assert [r[1] for r in rows[1:]] == [
        '\'=HYPERLINK("http://example.invalid")',
        "'-x",
        "plain",
        "'@SUM(A1)",
    ]
    assert [float(r[2]) for r in rows[1:]] == [-0.5, 0.25, 1.0, -3.5]
    assert [r[3] for r in rows[1:]] == ["-1", "2", "3", "4"]
    pd.testing.assert_frame_equal(frame, before)  # the caller's table is not changed
