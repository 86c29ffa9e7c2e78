"""The generated references in resources/docs match the parser and the registry."""

from __future__ import annotations

from pathlib import Path

from meaningbench import reference_docs
from meaningbench.cli import build_parser
from meaningbench.metrics.registry import metric_classes


def test_generated_references_are_up_to_date() -> None:
    assert reference_docs.stale_files() == [], "run: python -m meaningbench.reference_docs"


def test_a_drifted_file_is_reported(tmp_path: Path) -> None:
    for name, content in reference_docs.generated_files().items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    assert reference_docs.stale_files(tmp_path) == []
    cli = tmp_path / reference_docs.CLI_FILE
    cli.write_text(cli.read_text().replace("--json", "--jsn", 1), encoding="utf-8")
    assert reference_docs.stale_files(tmp_path) == [reference_docs.CLI_FILE]


def test_every_command_option_and_metric_is_documented() -> None:
    cli = reference_docs.cli_reference()
    parser = build_parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in commands.choices.items():
        assert f"## `meaningbench {name}`" in cli
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in cli, (name, option)
    metrics = reference_docs.metric_reference()
    for name in metric_classes():
        assert f"| `{name}` |" in metrics
