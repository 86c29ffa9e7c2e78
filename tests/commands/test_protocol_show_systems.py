"""`meaningbench protocol --show-systems / --hide-systems`: whether kits keep the outputs'
system names, stored in the study's settings and followed by the kits made afterwards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from meaningbench.annotation.settings import load_settings
from meaningbench.cli import main
from meaningbench.db.study import open_study
from tests.kits.campaign_helpers import lead_study


def _stored(path: Path) -> bool:
    study = open_study(path)
    try:
        with study.session() as s:
            return load_settings(s).show_systems
    finally:
        study.close()


def _kit_systems(tmp_path: Path, lead: Path, name: str) -> set[str | None]:
    out = tmp_path / name
    assert main(["kit", str(lead), "--raters", "ana", "--out", str(out), "--json"]) == 0
    conn = sqlite3.connect(f"{(out / 'ana.mbkit').resolve().as_uri()}?immutable=1", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT system FROM item")}
    finally:
        conn.close()


def test_show_systems_is_stored_shown_and_followed_by_the_next_kits(tmp_path: Path, capsys) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=3, n_sources=6).close()
    assert main(["protocol", str(lead), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["show_systems"] is False
    assert _kit_systems(tmp_path, lead, "blind") == {None}

    assert main(["protocol", str(lead), "--show-systems"]) == 0
    assert "system names kept in kits" in capsys.readouterr().out
    assert _stored(lead) is True
    assert _kit_systems(tmp_path, lead, "shown") == {"system-0", "system-1"}
    capsys.readouterr()

    # Another option leaves the choice as it is.
    assert main(["protocol", str(lead), "--hidden-number", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["show_systems"] is True

    assert main(["protocol", str(lead), "--hide-systems", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["show_systems"] is False
    assert _stored(lead) is False
    assert _kit_systems(tmp_path, lead, "blind-again") == {None}


def test_show_and_hide_systems_together_are_refused_and_change_nothing(
    tmp_path: Path, capsys
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=3, n_sources=2).close()
    with pytest.raises(SystemExit) as exc:
        main(["protocol", str(lead), "--show-systems", "--hide-systems"])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert _stored(lead) is False
