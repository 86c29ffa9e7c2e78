"""The command line writes a study through the same ops as the screens (meaningbench.ops),
so that each write exists once.

Read from each module of meaningbench.commands, a command writes when it
- imports an op, or
- imports one of the engine's functions that write a study (WRITERS below), or
- begins a transaction for writing itself (`.session(write=True)`), or
- opens a study it may write and keeps it open (`open_existing_study` without
  `reading=True`, or the db's `open_study` or `create_study`, not closed at once: closing
  at once is how a command checks that the file is a study before its work).
Such a module must take its writes from meaningbench.ops: it imports an op and none of
WRITERS, and begins no write transaction of its own. The modules that still write outside
the ops are named in LEFT_OUTSIDE with the reason; an entry there that no longer writes
outside fails too, so the list only shrinks.

What this cannot see: a module that imports an op and also writes through the ORM in a
plain `.session()`; WRITERS names the engine's writes the commands reach, not every one.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "app" / "commands"

# The engine's functions that write a study file: those the ops run for the commands, and
# those the commands in LEFT_OUTSIDE still call themselves.
WRITERS = {
    "meaningbench.analysis.label_sets": ("add_fixed_labels", "choose_label_set"),
    "meaningbench.analysis.resolutions": ("resolve_item",),
    "meaningbench.annotation.merge": ("merge_ratings",),
    "meaningbench.annotation.practice": ("add_practice",),
    "meaningbench.annotation.protocols": ("set_protocol",),
    "meaningbench.annotation.settings": ("save_settings",),
    "meaningbench.annotation.span_io": ("import_spans",),
    "meaningbench.cluster.export": ("export_shards",),
    "meaningbench.cluster.local_exec": ("score_here",),
    "meaningbench.cluster.merge": ("merge_results",),
    "meaningbench.cluster.pipeline": ("score_with_ray",),
    "meaningbench.cluster.ray_exec": ("score_on_ray",),
    "meaningbench.datasets.demo": ("build_demo_study",),
    "meaningbench.datasets.importer": ("import_file",),
    "meaningbench.datasets.language": ("set_study_language",),
    "meaningbench.db.runs": ("interrupt_gone_runs",),
    "meaningbench.db.study": ("create_study",),
    "meaningbench.jobs.judge_rater": ("judge_as_rater",),
    "meaningbench.jobs.scene_import": ("import_ucca", "propose_into_study"),
    "meaningbench.jobs.scene_store": ("replace_scenes",),
    "meaningbench.jobs.scoring": ("score_study",),
    "meaningbench.jobs.sweep": ("run_sweep",),
    "meaningbench.kits.collecting": ("collect_kits",),
    "meaningbench.kits.making": ("make_kits",),
    "meaningbench.training": ("train_model",),
}

# Commands that still write outside the ops, and why.
LEFT_OUTSIDE = {
    "baseline": "writes no study: it opens one writable only to read its texts for the "
    "baseline file it writes (reading=True would open a read-only study too)",
}


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse((COMMANDS / f"{name}.py").read_text(encoding="utf-8"))


def _commands() -> list[str]:
    return sorted(p.stem for p in COMMANDS.glob("*.py") if not p.stem.startswith("_"))


def _imported(tree: ast.Module) -> set[tuple[str, str]]:
    return {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def _writers_imported(tree: ast.Module) -> list[str]:
    return sorted(f"{m}.{n}" for m, n in _imported(tree) if n in WRITERS.get(m, ()))


def _imports_an_op(tree: ast.Module) -> bool:
    return any(m.startswith("meaningbench.ops.") for m, _ in _imported(tree))


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _write_sessions(tree: ast.Module) -> int:
    return sum(
        isinstance(node, ast.Call)
        and _called(node) == "session"
        and any(
            k.arg == "write" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        for node in ast.walk(tree)
    )


def _reads_only(call: ast.Call) -> bool:
    return any(
        k.arg == "reading" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def _opens_for_writing(tree: ast.Module) -> int:
    """Studies opened writable and kept open (not `open_…(…).close()`)."""
    closed_at_once = {
        id(node.func.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "close"
    }
    return sum(
        isinstance(node, ast.Call)
        and id(node) not in closed_at_once
        and (
            (_called(node) == "open_existing_study" and not _reads_only(node))
            or _called(node) in ("open_study", "create_study")
        )
        for node in ast.walk(tree)
    )


def _writes(name: str) -> bool:
    tree = _tree(name)
    return bool(
        _imports_an_op(tree)
        or _writers_imported(tree)
        or _write_sessions(tree)
        or _opens_for_writing(tree)
    )


def _outside_ops(name: str) -> list[str]:
    """How a writing command writes without the ops (empty: through them only)."""
    tree = _tree(name)
    faults = [f"imports {w}" for w in _writers_imported(tree)]
    if _write_sessions(tree):
        faults.append("begins a write transaction itself")
    if not _imports_an_op(tree):
        faults.append("writes, and imports no op")
    return faults


def test_every_writer_named_exists() -> None:
    for module, names in WRITERS.items():
        loaded = importlib.import_module(module)
        for name in names:
            assert callable(getattr(loaded, name, None)), f"{module}.{name}"


def test_the_check_sees_a_write_outside_the_ops(tmp_path: Path) -> None:
    # A command as merge was written before it ran the op: the engine's write, called here.
    source = (
        "def run(args):\n"
        "    from meaningbench.annotation.merge import merge_ratings\n"
        "    study = common.open_existing_study(args.study)\n"
        "    merge_ratings(study, args.other)\n"
    )
    tree = ast.parse(source)
    assert _writers_imported(tree) == ["meaningbench.annotation.merge.merge_ratings"]
    assert _opens_for_writing(tree) == 1 and not _imports_an_op(tree)
    checked = ast.parse("common.open_existing_study(args.study).close()")
    assert _opens_for_writing(checked) == 0


@pytest.mark.parametrize("name", _commands())
def test_a_command_writes_only_through_the_ops(name: str) -> None:
    if name in LEFT_OUTSIDE or not _writes(name):
        return
    assert _outside_ops(name) == [], f"commands/{name}.py"


def test_the_commands_left_outside_still_are() -> None:
    assert set(LEFT_OUTSIDE) <= set(_commands())
    through = [n for n in LEFT_OUTSIDE if not (_writes(n) and _outside_ops(n))]
    assert through == [], "these write through the ops now: take them off LEFT_OUTSIDE"
