"""`meaningbench import / info / export / demo`: output, exit codes, studies left intact."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.cli import main

PAIRS = "source,output,system,annotator,meaning\nS1.,O1.,a,r1,80\nS1.,O2.,b,r1,20\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_import_creates_the_study_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    study = tmp_path / "s.mbstudy"
    assert main(["import", str(study), str(_write(tmp_path / "p.csv", PAIRS))]) == 0
    out = capsys.readouterr().out
    assert study.exists() and "created study" in out
    assert "items created:        2" in out and "ratings stored:       2" in out
    assert "ratings are:          per-rater (named) (inferred; --ratings overrides)" in out
    assert "per-rater (named): 2 rating rows, 2 ratings stored (1 named rater)" in out
    assert main(["import", str(study), str(tmp_path / "p.csv"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["created"] is False and report["items_existing"] == 2
    assert report["ratings_added"] == 0 and report["ratings_existing"] == 2
    assert report["rating_kind"] == "named" and report["ratings_read"] == 2
    assert report["sources"][0]["kind"] == "named" and report["sources"][0]["already_there"] == 2


def test_import_options_reach_the_importer(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = tmp_path / "s.mbstudy"
    f = _write(tmp_path / "x.txt", "sent\tsimp\tq\nS.\tO.\t55\n")
    code = main(
        [
            "import", str(study), str(f), "--format", "tsv", "--map", "source=sent",
            "--map", "output=simp", "--map", "meaning=q", "--dataset", "mine",
            "--system", "sysX", "--json",
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["datasets"] == ["mine"] and report["dimensions"] == {"meaning": 1}
    assert main(["info", str(study), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["systems"] == [{"name": "sysX", "items": 1}]


def test_bad_input_exits_2_with_the_location(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = tmp_path / "s.mbstudy"
    bad = _write(tmp_path / "bad.csv", PAIRS + "S2.,O3.,c,r2,abc\n")
    assert main(["import", str(study), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "row 4" in err and "column 'meaning'" in err and "bad.csv" in err
    assert "Traceback" not in err
    # The study did not exist before the failed import, and does not exist after it.
    assert not study.exists() and not list(tmp_path.glob("s.mbstudy*"))

    assert main(["import", str(study), str(_write(tmp_path / "p.csv", PAIRS))]) == 0
    before = study.read_bytes()
    assert main(["import", str(study), str(bad)]) == 2
    assert study.read_bytes() == before


def test_missing_things_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = tmp_path / "none.mbstudy"
    assert main(["import", str(study), str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err and not study.exists()
    for argv in (["info", str(study)], ["export", str(study), str(tmp_path / "o.csv")]):
        assert main(argv) == 2
        assert "no such study" in capsys.readouterr().err
    not_a_study = _write(tmp_path / "text.mbstudy", "hello")
    assert main(["info", str(not_a_study)]) == 2
    assert "not a MeaningBench study" in capsys.readouterr().err


def test_export_commands(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = tmp_path / "s.mbstudy"
    main(["import", str(study), str(_write(tmp_path / "p.csv", PAIRS))])
    capsys.readouterr()
    assert main(["export", str(study), str(tmp_path / "items.csv")]) == 0
    assert "wrote 2 rows" in capsys.readouterr().out
    header = (tmp_path / "items.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.endswith("meaning_human,meaning_mean,meaning_n")
    assert main(["export", str(study), str(tmp_path / "r.jsonl"), "--ratings", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["table"] == "ratings"
    assert len((tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    assert main(["export", str(study), str(tmp_path / "o.xlsx")]) == 2
    assert ".csv, .tsv or .jsonl" in capsys.readouterr().err


def test_demo_without_gui(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / "d" / "demo.mbstudy"
    assert main(["demo", "--no-gui", "--path", str(target)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{target}\n" and f"built demo study {target}" in err
    before = target.read_bytes()
    assert main(["demo", "--no-gui", "--path", str(target)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{target}\n" and "opening demo study" in err
    assert target.read_bytes() == before
    # Default place: the user's studies folder (MEANINGBENCH_HOME in tests).
    assert main(["demo", "--no-gui"]) == 0
    home = Path(os.environ["MEANINGBENCH_HOME"])
    assert (home / "studies" / "demo.mbstudy").exists()


def test_demo_refuses_a_file_that_is_not_a_study(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    target = _write(tmp_path / "demo.mbstudy", "not a study")
    assert main(["demo", "--no-gui", "--path", str(target)]) == 2
    assert target.read_text(encoding="utf-8") == "not a study"


@pytest.mark.parametrize("command", ["import", "info", "export", "demo"])
def test_help(command: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: meaningbench" in capsys.readouterr().out


def test_cli_format_list_matches_the_importer() -> None:
    from meaningbench.commands.import_cmd import FORMATS as CLI_FORMATS
    from meaningbench.datasets.importer import FORMATS

    assert set(CLI_FORMATS) == set(FORMATS)


def test_real_console_script(tmp_path: Path) -> None:
    exe = shutil.which("meaningbench", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the meaningbench console script is not installed")
    study = tmp_path / "s.mbstudy"
    data = _write(tmp_path / "p.csv", PAIRS)
    done = subprocess.run(
        [exe, "import", str(study), str(data)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    info = subprocess.run(
        [exe, "info", str(study), "--json"], capture_output=True, text=True, timeout=120
    )
    assert info.returncode == 0 and json.loads(info.stdout)["items"] == 2
    bad = subprocess.run(
        [exe, "info", str(tmp_path / "missing.mbstudy")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "no such study" in bad.stderr and "Traceback" not in bad.stderr
