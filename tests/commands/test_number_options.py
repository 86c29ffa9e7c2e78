"""Numbers on the command line and in settings: one rule (meaningbench.core.numbers), finite,
plain ASCII; whatever is stored stays valid JSON."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.cli import main
from meaningbench.core.numbers import NumberProblem, plain_number
from meaningbench.db.study import create_study, open_study
from meaningbench.errors import UserError

BAD = ["nan", "inf", "-Infinity", "5_0", "１０", "1e999", "1,5", ""]


def _settings_json(path: Path) -> str:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT value FROM study_setting WHERE key = 'annotation'").fetchone()
    finally:
        con.close()
    return "" if row is None else str(row[0])


@pytest.mark.parametrize("text", BAD)
def test_the_rule_refuses_what_float_accepts(text: str) -> None:
    with pytest.raises(NumberProblem, match=repr(text).replace("\\", "\\\\")):
        plain_number(text)


@pytest.mark.parametrize(("text", "value"), [("50", 50.0), (" -2.5 ", -2.5), ("1e-3", 0.001)])
def test_plain_numbers_read(text: str, value: float) -> None:
    assert plain_number(text) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nan", "is not a finite number"),
        ("inf", "is not a finite number"),
        ("5_0", "is not a number (digit separators"),
        ("１０", "is not a number (write it with the digits 0-9"),
    ],
)
def test_raters_threshold_refuses_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    before = _settings_json(study)
    assert main(["raters", str(study), "--threshold", f"max_same_share={text}"]) == 2
    err = capsys.readouterr().err
    assert f"--threshold max_same_share={text}: {text!r} {why}" in err
    assert "Traceback" not in err
    assert _settings_json(study) == before


def test_stored_thresholds_are_valid_json(tmp_path: Path) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    assert main(["raters", str(study), "--threshold", "max_same_share=0.5"]) == 0
    stored = _settings_json(study)
    # Strict JSON: NaN or Infinity in the text would fail here.
    parsed = json.loads(stored, parse_constant=lambda c: pytest.fail(f"{c} stored"))
    assert parsed["rater_thresholds"] == {"max_same_share": 0.5}
    st = open_study(study)
    try:
        with st.session(write=True) as s:
            settings = load_settings(s)
            settings.rater_thresholds = {"max_same_share": float("nan")}
            with pytest.raises(UserError, match="max_same_share: nan is not a finite number"):
                save_settings(s, settings)
    finally:
        st.close()
    assert _settings_json(study) == stored


@pytest.mark.parametrize("text", ["nan", "inf", "5_0", "１０"])
def test_practice_add_refuses_non_plain_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    csv_file = tmp_path / "p.csv"
    csv_file.write_text(f"source,output,low,high\nA cat.,A cat.,{text},90\n", encoding="utf-8")
    assert main(["practice", str(study), "--add", str(csv_file)]) == 2
    err = capsys.readouterr().err
    assert f"p.csv, row 2, column 'low': {text!r} is not a" in err
    con = sqlite3.connect(f"file:{study}?mode=ro", uri=True)
    try:
        assert con.execute("SELECT COUNT(*) FROM practice_item").fetchone() == (0,)
    finally:
        con.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "{study}", "--tolerance", "nan"],
        ["train", "{study}", "--lr", "inf"],
        ["train", "{study}", "--val-fraction", "0_1"],
        ["train", "{study}", "--warmup-ratio", "０.1"],
        ["correlate", "{study}", "--boot", "1_000"],
        ["report", "{study}", "--sanity-n", "２００"],
        ["train", "{study}", "--epochs", "2.5"],
        ["score", "{study}", "--workers", "inf"],
    ],
)
def test_number_options_use_the_same_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    args = [a.replace("{study}", str(study)) for a in argv]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {argv[2]}: {argv[3]!r} is not a" in err


def test_a_nan_stored_by_an_earlier_version_reads_as_no_threshold(tmp_path: Path) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    assert main(["raters", str(study), "--threshold", "min_agreement=0.3"]) == 0
    con = sqlite3.connect(study)
    try:
        stored = json.loads(_settings_json(study))
        stored["rater_thresholds"]["max_same_share"] = float("nan")
        con.execute(
            "UPDATE study_setting SET value = ? WHERE key = 'annotation'", (json.dumps(stored),)
        )
        con.commit()
    finally:
        con.close()
    assert "NaN" in _settings_json(study)
    # The next threshold saves the settings again, as strict JSON, without the NaN.
    assert main(["raters", str(study), "--threshold", "min_qc_pass_rate=0.5"]) == 0
    thresholds = json.loads(_settings_json(study))["rater_thresholds"]
    assert thresholds == {"min_agreement": 0.3, "min_qc_pass_rate": 0.5}


def test_every_number_option_of_every_command_follows_the_rule() -> None:
    """No option is left to Python's int() or float(), which take "5_0" and "１０"."""
    import argparse

    from meaningbench.cli import build_parser
    from meaningbench.commands._common import number_option, whole_number_option

    def options(parser: argparse.ArgumentParser):  # noqa: ANN202
        for action in parser._actions:
            yield action
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from options(sub)

    types = [a.type for a in options(build_parser()) if a.type is not None]
    assert int not in types and float not in types
    assert whole_number_option in types and number_option in types
