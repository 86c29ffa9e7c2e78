"""Embedding caches: a bounded in-memory LRU for the run, a bounded on-disk store across runs.

A source sentence is scored against every system's output, so its embedding is computed once
and reused (memory). A study re-scored after new outputs were added finds the embeddings of
its sources on disk and encodes only the new sentences. Both caches are keyed by
(model fingerprint, what was embedded — a layer or a pooled sentence vector —, text) and both
are bounded so a million-item run keeps a flat memory and disk footprint.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.heap import trim_heap
from app.settings import data_dir

DEFAULT_MEMORY_MB = 256
DEFAULT_DISK_MB = 512
# Evicting this much makes the cache ask the allocator to return the freed pages (see
# app.heap): often enough to keep the resident size flat, rare enough to cost ~1% of a run.
TRIM_AFTER_EVICTED_MB = 32


@dataclass(frozen=True)
class Embedding:
    """Token ids (empty for a pooled vector) and float32 vectors, rows L2-normalised."""

    ids: tuple[int, ...]
    vectors: Any  # torch.Tensor [n, d] (tokens) or [d] (pooled), float32, CPU

    @property
    def nbytes(self) -> int:
        return int(self.vectors.numel()) * 4 + 8 * len(self.ids) + 200


class MemoryLRU:
    """Least-recently-used entries go first once the byte budget is spent.

    Every `trim_after_bytes` of evicted entries, `release()` hands the freed heap pages back
    to the system, so a long run's resident size stays flat rather than only its bytes in use.
    """

    def __init__(self, max_bytes: int, trim_after_bytes: int = TRIM_AFTER_EVICTED_MB * 2**20):
        self.max_bytes = max_bytes
        self.trim_after_bytes = trim_after_bytes
        self.trims = 0
        self._data: OrderedDict[tuple[str, str], Embedding] = OrderedDict()
        self._bytes = 0
        self._evicted_since_trim = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> Embedding | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: tuple[str, str], value: Embedding) -> None:
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._data[key] = value
            self._bytes += value.nbytes
            while self._bytes > self.max_bytes and self._data:
                _, evicted = self._data.popitem(last=False)
                self._bytes -= evicted.nbytes
                self._evicted_since_trim += evicted.nbytes

    def release(self) -> bool:
        """Trim the heap when enough was evicted since the last trim; True when it trimmed.

        Called between batches, once the caller's references to evicted entries are gone.
        """
        with self._lock:
            if self._evicted_since_trim < self.trim_after_bytes:
                return False
            self._evicted_since_trim = 0
        trim_heap()
        self.trims += 1
        return True

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._evicted_since_trim += self._bytes
            self._data.clear()
            self._bytes = 0


MEMORY = MemoryLRU(DEFAULT_MEMORY_MB * 2**20)


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

    def get_many(self, texts: Sequence[str]) -> dict[str, Embedding]:
        import numpy as np
        import torch

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
                    tensor = torch.from_numpy(arr)
                    if ids:
                        tensor = tensor.view(-1, dim)
                    id_tuple = tuple(np.frombuffer(ids, dtype=np.int32).tolist())
                    found[keys[k]] = Embedding(id_tuple, tensor)
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
                vec = emb.vectors.contiguous().numpy().astype(np.float32).tobytes()
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


def close_disk_stores() -> None:
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()


def get_or_compute(
    namespace: str,
    texts: Sequence[str],
    compute: Callable[[list[str]], list[Embedding]],
    disk: DiskStore | None = None,
    persist: Callable[[str], bool] | None = None,
) -> dict[str, Embedding]:
    """Embeddings for the distinct `texts`: memory first, then disk, then `compute`.

    `persist` picks which computed texts go to disk (the side of a pair that is reused).
    The returned dict holds strong references, so eviction during the call is harmless.
    """
    # The previous batch's embeddings are out of the caller's hands by now: a good moment.
    MEMORY.release()
    out: dict[str, Embedding] = {}
    missing: list[str] = []
    for text in dict.fromkeys(texts):
        hit = MEMORY.get((namespace, text))
        if hit is None:
            missing.append(text)
        else:
            out[text] = hit
    remembered = [t for t in out if persist is None or persist(t)]
    if missing and disk is not None:
        for text, emb in disk.get_many(missing).items():
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
