"""What the sweep's tests share besides the tiny encoder (tests/metrics/neural/conftest.py):
a count of an encoder's forward passes, and a corpus file to take idf weights from."""

from __future__ import annotations

from pathlib import Path


class ForwardCounter:
    """Counts the sequences that go through a model's embedding layer (every forward pass
    of the model or of a view cut after some layer goes through it)."""

    def __init__(self, loaded) -> None:
        self.sequences = 0
        self._handle = loaded.model.embeddings.register_forward_hook(self._hook)

    def _hook(self, module, args, output) -> None:
        self.sequences += int(output.shape[0])

    def close(self) -> None:
        self._handle.remove()


def write_corpus(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
