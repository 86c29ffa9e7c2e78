"""Embedding caches: a bounded in-memory LRU for the run, a bounded on-disk store across runs.

A source sentence is scored against every system's output, so its embedding is computed once
and reused (memory). A study re-scored after new outputs were added finds the embeddings of
its sources on disk and encodes only the new sentences. Both caches are keyed by
(model fingerprint, what was embedded — a layer or a pooled sentence vector —, text) and both
are bounded so a million-item run keeps a flat memory and disk footprint.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meaningbench.core.heap import trim_heap
from meaningbench.settings import data_dir

DEFAULT_MEMORY_MB = 256
DEFAULT_DISK_MB = 512
# After this many bytes of new embeddings the cache asks the allocator to return freed
# pages (see meaningbench.core.heap): about once per batch of 256 items of 30 words.
TRIM_AFTER_MB = 16


@dataclass(frozen=True)
class Embedding:
    """Token ids (empty for a pooled vector) and float32 vectors, rows L2-normalised."""

    ids: tuple[int, ...]
    # [n, d] (tokens) or [d] (pooled), float32, CPU: a torch tensor, or a numpy array
    # where ONNX Runtime computed it without torch (onnx_encoder.light_model).
    vectors: Any


@dataclass(frozen=True)
class _Slot:
    offset: int  # in float32 elements from the start of the block
    shape: tuple[int, ...]
    ids: tuple[int, ...]
    written: int  # the block's write count (in elements) when this slot was written

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class MemoryLRU:
    """A least-recently-used embedding cache (approximately) in one preallocated float32 block.

    Entries are copied into the block at a write head that goes round it like a ring; what
    the head is about to overwrite (the least recently written) is dropped first. A hit that
    has aged past half the block is copied to the head again, so a source used by every
    system stays. Callers always get their own copy, so eviction never touches a tensor in
    use. Keeping the cache out of the general heap matters for long runs: thousands of
    50 kB tensors freed in LRU order between model activations of every size fragment
    the heap, and the process grows by hundreds of megabytes although the bytes in use
    stay flat. Every `trim_after_bytes` written, `release()` also hands freed heap pages
    back to the system for what remains (see meaningbench.core.heap).
    """

    def __init__(self, max_bytes: int, trim_after_bytes: int = TRIM_AFTER_MB * 2**20) -> None:
        self.max_bytes = max_bytes
        self.trim_after_bytes = trim_after_bytes
        self.trims = 0
        self._block: Any = None  # a numpy float32 array, allocated at the first put
        self._head = 0
        self._written = 0
        self._written_at_trim = 0
        self._slots: OrderedDict[tuple[str, str], _Slot] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        """How many float32 values the block holds."""
        return max(0, self.max_bytes // 4)

    def get(self, key: tuple[str, str], numpy: bool = False) -> Embedding | None:
        """The cached entry (a copy), as a numpy array or (by default) a torch tensor."""
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                return None
            flat = self._block[slot.offset : slot.offset + slot.size]
            array = flat.copy().reshape(slot.shape)
            if self._written - slot.written > self.capacity // 2:
                self._drop(key)
                self._write(key, array, slot.ids)
            return Embedding(slot.ids, array if numpy else _torch_from(array))

    def put(self, key: tuple[str, str], value: Embedding) -> None:
        with self._lock:
            if key in self._slots:
                self._drop(key)
            array = as_array(value.vectors)
            if array.size <= self.capacity:
                self._write(key, array, value.ids)

    def _drop(self, key: tuple[str, str]) -> None:
        slot = self._slots.pop(key)
        self._used -= slot.size

    def _write(self, key: tuple[str, str], vectors: Any, ids: tuple[int, ...]) -> None:
        import numpy as np

        n = int(vectors.size)
        if self._block is None:
            self._block = np.empty(self.capacity, dtype=np.float32)
            self._head = 0
        if self._head + n > self.capacity:
            # The rest of this lap is too short: what lies there is the oldest; drop it.
            while self._slots and next(iter(self._slots.values())).offset >= self._head:
                self._drop(next(iter(self._slots)))
            self._head = 0
        # Slots of the previous lap sit at or after the head, oldest first: drop the ones
        # the new entry overlaps.
        while self._slots:
            first_key, first = next(iter(self._slots.items()))
            if first.offset >= self._head + n or first.offset < self._head:
                break
            self._drop(first_key)
        self._block[self._head : self._head + n] = vectors.reshape(-1)
        self._slots[key] = _Slot(self._head, tuple(vectors.shape), ids, self._written)
        self._head += n
        self._written += n
        self._used += n

    def release(self) -> bool:
        """Trim the heap when enough was written since the last trim; True when it trimmed.

        Called between batches, once the caller's tensors of the last batch are gone.
        """
        with self._lock:
            if (self._written - self._written_at_trim) * 4 < self.trim_after_bytes:
                return False
            self._written_at_trim = self._written
        trim_heap()
        self.trims += 1
        return True

    @property
    def nbytes(self) -> int:
        """Bytes of the cached vectors (the block itself is `max_bytes` once used)."""
        return self._used * 4

    def __len__(self) -> int:
        return len(self._slots)

    def clear(self) -> None:
        with self._lock:
            self._slots.clear()
            self._used = 0
            self._block = None
            self._head = 0


MEMORY = MemoryLRU(DEFAULT_MEMORY_MB * 2**20)


def is_array(vectors: Any) -> bool:
    """Whether `vectors` is a numpy array (told without importing torch)."""
    import numpy as np

    return isinstance(vectors, np.ndarray)


def as_array(vectors: Any) -> Any:
    """`vectors` as a float32 numpy array (a float32 CPU tensor's shares its memory)."""
    import numpy as np

    array = vectors if is_array(vectors) else vectors.detach().float().cpu().contiguous().numpy()
    return np.ascontiguousarray(array, dtype=np.float32)


def _torch_from(array: Any) -> Any:
    import torch

    return torch.from_numpy(array)


def _text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class DiskStore:
    """One SQLite file per (model, what): text hash → ids and float32 vectors.

    It stops accepting entries once `max_bytes` is reached instead of evicting, so a huge
    streaming run does not rewrite the disk; what a study needs most (its sources, written
    first) stays.
    """

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._bytes: int | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS emb (k BLOB PRIMARY KEY, ids BLOB, vec BLOB, "
                "dim INTEGER)"
            )
            self._bytes = conn.execute(
                "SELECT COALESCE(SUM(LENGTH(ids) + LENGTH(vec)), 0) FROM emb"
            ).fetchone()[0]
            self._conn = conn
        return self._conn

    def get_many(self, texts: Sequence[str], numpy: bool = False) -> dict[str, Embedding]:
        """The stored embeddings of `texts`, as numpy arrays or (by default) torch tensors."""
        import numpy as np

        found: dict[str, Embedding] = {}
        if not texts:
            return found
        with self._lock:
            conn = self._connect()
            keys = {_text_key(t): t for t in texts}
            key_list = list(keys)
            for start in range(0, len(key_list), 500):
                chunk = key_list[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT k, ids, vec, dim FROM emb WHERE k IN ({marks})", chunk
                ).fetchall()
                for k, ids, vec, dim in rows:
                    arr = np.frombuffer(vec, dtype=np.float32).copy()
                    if ids:
                        arr = arr.reshape(-1, dim)
                    id_tuple = tuple(np.frombuffer(ids, dtype=np.int32).tolist())
                    found[keys[k]] = Embedding(id_tuple, arr if numpy else _torch_from(arr))
        return found

    @property
    def full(self) -> bool:
        return self._bytes is not None and self._bytes >= self.max_bytes

    def absent(self, texts: Sequence[str]) -> list[str]:
        """The texts this store does not hold."""
        if not texts:
            return []
        with self._lock:
            conn = self._connect()
            keys = {_text_key(t): t for t in texts}
            present: set[bytes] = set()
            key_list = list(keys)
            for start in range(0, len(key_list), 500):
                chunk = key_list[start : start + 500]
                marks = ",".join("?" * len(chunk))
                present.update(
                    k for (k,) in conn.execute(f"SELECT k FROM emb WHERE k IN ({marks})", chunk)
                )
            return [t for k, t in keys.items() if k not in present]

    def put_many(self, items: Iterable[tuple[str, Embedding]]) -> None:
        import numpy as np

        with self._lock:
            conn = self._connect()
            rows = []
            assert self._bytes is not None
            for text, emb in items:
                vec = as_array(emb.vectors).tobytes()
                ids = np.asarray(emb.ids, dtype=np.int32).tobytes()
                if self._bytes + len(vec) + len(ids) > self.max_bytes:
                    break
                self._bytes += len(vec) + len(ids)
                rows.append((_text_key(text), ids, vec, int(emb.vectors.shape[-1])))
            if rows:
                with conn:
                    conn.executemany("INSERT OR IGNORE INTO emb VALUES (?, ?, ?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_STORES: dict[Path, DiskStore] = {}
_STORES_LOCK = threading.Lock()


def disk_store(model_key: str, fingerprint: str, what: str, max_mb: float) -> DiskStore | None:
    """The shared store for a model and what was embedded, or None when disabled (0 MB)."""
    if max_mb <= 0:
        return None
    path = data_dir() / "cache" / "embeddings" / model_key / f"{fingerprint}-{what}.sqlite"
    with _STORES_LOCK:
        store = _STORES.get(path)
        if store is None:
            store = DiskStore(path, int(max_mb * 2**20))
            _STORES[path] = store
        store.max_bytes = int(max_mb * 2**20)
        return store


def get_or_compute(
    namespace: str,
    texts: Sequence[str],
    compute: Callable[[list[str]], list[Embedding]],
    disk: DiskStore | None = None,
    persist: Callable[[str], bool] | None = None,
    numpy: bool = False,
) -> dict[str, Embedding]:
    """Embeddings for the distinct `texts`: memory first, then disk, then `compute`.

    `persist` picks which computed texts go to disk (the side of a pair that is reused);
    `numpy`: what the caches hold is handed back as numpy arrays (as `compute` makes them),
    not as torch tensors.
    The returned dict holds strong references, so eviction during the call is harmless.
    """
    # The previous batch's embeddings are out of the caller's hands by now: a good moment.
    MEMORY.release()
    out: dict[str, Embedding] = {}
    missing: list[str] = []
    for text in dict.fromkeys(texts):
        hit = MEMORY.get((namespace, text), numpy)
        if hit is None:
            missing.append(text)
        else:
            out[text] = hit
    remembered = [t for t in out if persist is None or persist(t)]
    if missing and disk is not None:
        for text, emb in disk.get_many(missing, numpy).items():
            out[text] = emb
            MEMORY.put((namespace, text), emb)
        missing = [t for t in missing if t not in out]
    computed = compute(missing) if missing else []
    for text, emb in zip(missing, computed, strict=True):
        out[text] = emb
        MEMORY.put((namespace, text), emb)
    if disk is not None and not disk.full:
        # What memory already held may never have reached this store (another study, or a
        # store that was full then): write whatever of it the store lacks.
        absent = disk.absent(remembered)
        keep = [t for t in missing if persist is None or persist(t)] + absent
        disk.put_many((t, out[t]) for t in keep)
    return out
