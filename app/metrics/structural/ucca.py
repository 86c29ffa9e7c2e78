"""Read scenes from UCCA's standard XML (the format of the UCCA corpora and of TUPA's output).

Layer 0 holds the terminals (Word / Punctuation, with their text and position); layer 1
the foundational units, whose edges carry the categories: a unit with a Process (P) or
State (S) child is a scene; its Participant (A) children are the participants; a unit's
minimal centre follows Centre (C) edges down, and for a participant that is itself a scene
(or holds parallel scenes, H) the minimal centre is that of its main relation. Linkage
nodes (LKG), linkers (L), adverbials (D), elaborators (E) and function words (F) are read
past. Remote edges count (the UCCA library's `outgoing` includes them, as EASSE does);
an implicit unit becomes a participant with no words.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from meaningbench.errors import InputError
from meaningbench.metrics.structural.scenes import Participant, SceneSpec

SCENE_RELATIONS = ("P", "S")


@dataclass
class _Edge:
    tag: str
    child: str
    remote: bool


@dataclass
class _Unit:
    id: str
    type: str
    implicit: bool = False
    edges: list[_Edge] = field(default_factory=list)


@dataclass
class UccaPassage:
    passage_id: str
    tokens: list[str]
    scenes: list[SceneSpec]
    file: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


class _Graph:
    def __init__(self, terminals: dict[str, int], units: dict[str, _Unit]) -> None:
        self.terminals = terminals  # terminal id -> token index
        self.units = units

    def children(self, unit: _Unit, tags: Iterable[str], *, remotes: bool = True) -> list[_Unit]:
        wanted = set(tags)
        return [
            self.units[e.child]
            for e in unit.edges
            if e.tag in wanted and e.child in self.units and (remotes or not e.remote)
        ]

    def words(self, unit: _Unit, seen: frozenset[str] = frozenset()) -> set[int]:
        """Token indices under a unit, punctuation (U edges) excluded; cycles cut."""
        out: set[int] = set()
        if unit.id in seen:
            return out
        for e in unit.edges:
            if e.tag == "Terminal" and e.child in self.terminals:
                if unit.type != "PNCT":
                    out.add(self.terminals[e.child])
            elif e.tag not in ("U", "LR", "LA") and e.child in self.units:
                out |= self.words(self.units[e.child], seen | {unit.id})
        return out

    def is_scene(self, unit: _Unit) -> bool:
        return bool(self.children(unit, SCENE_RELATIONS, remotes=False))

    def minimal_centre(self, unit: _Unit, depth: int = 0) -> set[int]:
        if depth > 50:  # malformed (cyclic) graphs end here rather than recurse forever
            return self.words(unit)
        centres = self.children(unit, ("C",))
        if centres:
            out: set[int] = set()
            for c in centres:
                out |= self.minimal_centre(c, depth + 1)
            return out
        relations = self.children(unit, SCENE_RELATIONS)
        if relations:
            out = set()
            for r in relations:
                out |= self.minimal_centre(r, depth + 1)
            return out
        parallel = self.children(unit, ("H",))
        if parallel:
            out = set()
            for h in parallel:
                out |= self.minimal_centre(h, depth + 1)
            return out
        return self.words(unit)


def _parse_root(root: ET.Element, file: str) -> tuple[str, list[str], _Graph]:
    if root.tag != "root":
        raise InputError(
            f"not UCCA standard XML (the root element is <{root.tag}>, expected <root>)",
            file=file,
        )
    terminal_pos: list[tuple[tuple[int, int], str, str]] = []
    units: dict[str, _Unit] = {}
    for layer in root.iter("layer"):
        layer_id = layer.get("layerID")
        for node in layer.findall("node"):
            node_id = node.get("ID", "")
            attrs = node.find("attributes")
            attrib = attrs.attrib if attrs is not None else {}
            if layer_id == "0":
                try:
                    key = (int(attrib.get("paragraph", 1)), int(attrib["paragraph_position"]))
                except (KeyError, ValueError) as exc:
                    raise InputError(
                        f"terminal {node_id} has no valid paragraph_position", file=file
                    ) from exc
                terminal_pos.append((key, node_id, attrib.get("text", "")))
            else:
                unit = _Unit(
                    node_id,
                    node.get("type", "FN"),
                    implicit=attrib.get("implicit", "").lower() == "true",
                )
                for edge in node.findall("edge"):
                    eattrs = edge.find("attributes")
                    remote = eattrs is not None and eattrs.get("remote", "").lower() == "true"
                    unit.edges.append(_Edge(edge.get("type", ""), edge.get("toID", ""), remote))
                units[node_id] = unit
    if not terminal_pos:
        raise InputError("no terminals in layer 0", file=file)
    terminal_pos.sort()
    tokens = [text for _, _, text in terminal_pos]
    terminals = {node_id: i for i, (_, node_id, _) in enumerate(terminal_pos)}
    return root.get("passageID", Path(file).stem), tokens, _Graph(terminals, units)


def _scenes(graph: _Graph, tokens: list[str]) -> list[SceneSpec]:
    found: list[SceneSpec] = []
    for unit in graph.units.values():
        if unit.type == "LKG" or not graph.is_scene(unit):
            continue
        relations = graph.children(unit, SCENE_RELATIONS, remotes=False)
        main: set[int] = set()
        for r in relations:
            main |= graph.minimal_centre(r)
        if not main:
            continue
        participants = []
        for edge in unit.edges:
            if edge.tag != "A" or edge.child not in graph.units:
                continue
            child = graph.units[edge.child]
            span = graph.words(child)
            centre = graph.minimal_centre(child) & span if span else set()
            participants.append(
                Participant(tuple(sorted(span)), tuple(sorted(centre)), remote=edge.remote)
            )
        found.append(SceneSpec(tuple(tokens), tuple(sorted(main)), tuple(participants), "ucca"))
    found.sort(key=lambda s: min(s.main_relation))
    return [s.with_position(i) for i, s in enumerate(found)]


def parse_ucca_xml(source: str | Path | bytes, *, file: str | None = None) -> UccaPassage:
    """One passage from a file path or from XML bytes/text."""
    name = file or (str(source) if isinstance(source, Path) else "<ucca xml>")
    try:
        root = ET.parse(source).getroot() if isinstance(source, Path) else ET.fromstring(source)
    except ET.ParseError as exc:
        raise InputError(f"not well-formed XML ({exc})", file=name) from exc
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", file=name) from exc
    passage_id, tokens, graph = _parse_root(root, name)
    return UccaPassage(passage_id, tokens, _scenes(graph, tokens), file=name)


def iter_ucca_files(path: Path) -> Iterator[Path]:
    """A file, or every .xml file under a folder (sorted, so imports are reproducible)."""
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*.xml") if p.is_file())
    elif path.is_file():
        yield path
    else:
        raise InputError("no such file or folder", file=str(path))
