"""Speech to discrete units, GSLM/TWIST style: self-supervised features (HuBERT, WavLM) -> k-means -> deduplication.

A unit speech LM reads speech as the index of the nearest k-means centroid of each feature frame of one encoder
layer, with runs of the same unit collapsed to one (TWIST: mHuBERT-25Hz layer 11, 500 units, deduplicated). The
encoder is any transformers audio model that returns hidden states (``HubertModel``, ``WavLMModel``); the k-means
model is a centroid matrix (``.npy``) or a fitted scikit-learn/joblib k-means file as textlesslib and fairseq ship.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio
from s2sbench.pipeline.core.errors import ConfigError, DataError
from s2sbench.pipeline.core.manifest import sha256_bytes

ENCODER_SAMPLE_RATE_HZ = 16000


def deduplicate(units: Sequence[int]) -> list[int]:
    """Collapse runs of one unit: ``[5, 5, 2, 2, 2, 5]`` -> ``[5, 2, 5]``."""
    return [unit for index, unit in enumerate(units) if index == 0 or unit != units[index - 1]]


def assign_units(features: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the nearest centroid (squared Euclidean distance) of each feature row."""
    if features.ndim != 2 or features.shape[1] != centroids.shape[1]:
        raise ValueError(f"features of shape {features.shape} do not match centroids of shape {centroids.shape}")
    features = features.astype(np.float32)
    centroids = centroids.astype(np.float32)
    # |x - c|^2 = |x|^2 - 2 x.c + |c|^2; |x|^2 is the same for every centroid of a row, so it can be left out
    distances = -2.0 * features @ centroids.T + (centroids**2).sum(axis=1)[None, :]
    return distances.argmin(axis=1)


def fit_kmeans(features: np.ndarray, n_units: int, *, seed: int = 0) -> np.ndarray:
    """Centroids of a k-means model fitted on ``features`` (frames x dim), for a new encoder or a test."""
    from sklearn.cluster import KMeans

    if len(features) < n_units:
        raise ValueError(f"k-means with {n_units} units needs at least {n_units} feature frames, got {len(features)}")
    model = KMeans(n_clusters=n_units, n_init=1, random_state=seed).fit(features.astype(np.float32))
    return model.cluster_centers_.astype(np.float32)


def load_kmeans(path: str | Path) -> np.ndarray:
    """Centroids from a ``.npy`` matrix (units x dim) or a joblib/pickle file of a fitted k-means (textlesslib's
    ``*_km500.bin``). A pickle can run code when loaded: only load files whose origin you trust."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"k-means file {path} does not exist")
    if path.suffix == ".npy":
        centroids = np.load(path)
    else:
        import joblib

        model = joblib.load(path)
        if not hasattr(model, "cluster_centers_"):
            raise DataError(f"{path}: {type(model).__name__} is not a fitted k-means (no cluster_centers_)")
        centroids = np.asarray(model.cluster_centers_)
    if centroids.ndim != 2:
        raise DataError(f"{path}: centroids must be a (units x dim) matrix, got shape {centroids.shape}")
    return centroids.astype(np.float32)


class UnitEncoder:
    """Audio -> units with one encoder layer and a k-means model.

    ``encoder`` is a hub id or local directory (loaded with ``AutoModel``) or an already built model; ``layer`` is
    the hidden-state index (0: the feature projection, ``n``: the output of transformer layer ``n``).
    """

    def __init__(self, encoder: str | Any, kmeans: str | Path | np.ndarray, *, layer: int,
                 deduplicate_units: bool = True, device: str | None = None, revision: str | None = None) -> None:
        from transformers import AutoModel

        from s2sbench.evaluation.models.causal import resolve_device

        device = resolve_device(device)
        if isinstance(encoder, str):
            self.encoder_id = encoder + (f"@{revision}" if revision else "")
            encoder = AutoModel.from_pretrained(encoder, revision=revision)
        else:
            self.encoder_id = getattr(encoder.config, "_name_or_path", "") or type(encoder).__name__
        self.model = encoder.to(device).eval()
        self.device = device
        self.centroids = kmeans if isinstance(kmeans, np.ndarray) else load_kmeans(kmeans)
        n_layers = self.model.config.num_hidden_layers
        if not 0 <= layer <= n_layers:
            raise ConfigError(f"layer {layer} is out of range for {self.encoder_id} (0..{n_layers})")
        self.layer = layer
        self.deduplicate_units = deduplicate_units

    @property
    def n_units(self) -> int:
        return int(self.centroids.shape[0])

    def features(self, audio: Audio) -> np.ndarray:
        """Hidden states of ``self.layer`` for one clip (frames x dim)."""
        import torch

        if audio.sample_rate_hz != ENCODER_SAMPLE_RATE_HZ:
            raise AdapterError(f"the unit encoder takes {ENCODER_SAMPLE_RATE_HZ} Hz audio, "
                               f"got {audio.sample_rate_hz} Hz")
        samples = np.ascontiguousarray(audio.samples, dtype=np.float32)
        # HuBERT and WavLM were trained on zero-mean unit-variance waveforms (their feature extractors' default)
        samples = (samples - samples.mean()) / np.sqrt(samples.var() + 1e-7)
        with torch.inference_mode():
            inputs = torch.from_numpy(samples)[None].to(self.device)
            hidden = self.model(inputs, output_hidden_states=True).hidden_states[self.layer]
        return hidden[0].float().cpu().numpy()

    def encode(self, audio: Audio) -> list[int]:
        units = assign_units(self.features(audio), self.centroids).tolist()
        return deduplicate(units) if self.deduplicate_units else units

    @property
    def fingerprint(self) -> str:
        centroids = sha256_bytes(np.ascontiguousarray(self.centroids).tobytes())[:12]
        dedup = " dedup" if self.deduplicate_units else ""
        return f"{self.encoder_id} L{self.layer} km{self.n_units}:{centroids}{dedup}"
