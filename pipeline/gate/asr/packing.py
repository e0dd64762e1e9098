"""Several short clips in one 30-second Whisper window, and the window's timestamped transcript split back onto them.

Whisper's encoder does the same work for a 3-second clip padded to its 30-second window as for 30 seconds of speech,
and on a CPU that encoder is most of the time. Whisper was trained on windows holding several utterances, so clips
placed one after another with silence between them (:data:`GAP_S`) are in its training distribution; decoded with
timestamps, each segment (``<|t0|> text <|t1|>``, 0.02 s a step) is given to the clip its time span falls in.

Correctness never rests on the split: a clip the split cannot give a transcript with confidence is returned as
unresolved, and the caller decodes it alone the usual way. Unresolved are the clips of a segment that reaches more
than :data:`STRADDLE_S` into a second clip or lies in the silence between clips, a clip that gets no segment and its
neighbours (its words may sit in theirs), a clip of which more than :data:`UNCOVERED_S` is covered by none of its
segments (Whisper now and then skips the last words of a window), and every clip of a window whose decoding hit the
token limit, left a segment open, or gave timestamps out of order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from s2sbench.pipeline.gate.asr.whisper_common import SAMPLE_RATE_HZ, WINDOW_SAMPLES

GAP_S = 2.0  # silence after each packed clip; at 1 s Whisper base ran Mandarin clips together (bench/README.md)
STRADDLE_S = 0.5  # how far a segment may reach into a neighbouring clip and still belong to the clip it mostly covers
UNCOVERED_S = 1.0  # a longer stretch of a clip that none of its segments covers: words skipped (seen at a window's end)
TIMESTAMP_S = 0.02  # one Whisper timestamp token
MAX_INITIAL_TIMESTAMP_S = 1.0  # the first segment starts by then (faster-whisper's transcribe default)


@dataclass(frozen=True)
class Placement:
    """One clip in a packed window: its index in the caller's list and where it lies in the window, in seconds."""

    index: int
    start_s: float
    end_s: float


@dataclass
class PackedWindow:
    placements: list[Placement] = field(default_factory=list)
    samples: int = 0  # where the next clip would start (after the gap)

    def audio(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        window = np.zeros(WINDOW_SAMPLES, dtype=np.float32)
        for placement in self.placements:
            start = round(placement.start_s * SAMPLE_RATE_HZ)
            clip = clips[placement.index]
            window[start : start + len(clip)] = clip
        return window


def pack(lengths: Sequence[int], gap_s: float = GAP_S) -> list[PackedWindow]:
    """Clips (their lengths in samples, in order) placed into windows: each window takes the next clips while they
    fit with a gap after each; a clip longer than the window less one gap gets a window of its own."""
    gap = round(gap_s * SAMPLE_RATE_HZ)
    windows: list[PackedWindow] = []
    current = PackedWindow()
    for index, length in enumerate(lengths):
        if current.placements and current.samples + length + gap > WINDOW_SAMPLES:
            windows.append(current)
            current = PackedWindow()
        start = current.samples
        current.placements.append(Placement(index, start / SAMPLE_RATE_HZ, (start + length) / SAMPLE_RATE_HZ))
        current.samples = start + length + gap
    if current.placements:
        windows.append(current)
    return windows


@dataclass(frozen=True)
class Segment:
    start_s: float
    end_s: float
    tokens: tuple[int, ...]  # the text tokens between the two timestamps


def parse_segments(tokens: Sequence[int], timestamp_begin: int) -> list[Segment] | None:
    """The timestamped segments of one decoded window, or None when their structure cannot be trusted: text before
    the first timestamp, a segment left open at the end, or a timestamp earlier than the one before it.

    Whisper writes ``<|a|> text <|b|>`` per segment and then, for the next, either its start timestamp (``<|b|><|c|>``
    with ``c >= b``) or the end of the text. Two timestamps with no text between them open a segment afresh.
    """
    segments: list[Segment] = []
    start: float | None = None
    text: list[int] = []
    last_s = 0.0
    for token in tokens:
        if token < timestamp_begin:
            if start is None:
                return None
            text.append(token)
            continue
        time_s = (token - timestamp_begin) * TIMESTAMP_S
        if time_s < last_s - 1e-9:
            return None
        last_s = time_s
        if start is not None and text:
            segments.append(Segment(start, time_s, tuple(text)))
            start, text = None, []
        else:
            start = time_s
    if text:
        return None
    return segments


def split(window: PackedWindow, segments: Sequence[Segment]) -> dict[int, list[int]]:
    """Each resolved clip's text tokens (by the caller's clip index); clips not in the result are unresolved."""
    placements = window.placements
    tokens: list[list[int]] = [[] for _ in placements]
    owned: list[list[Segment]] = [[] for _ in placements]
    unresolved: set[int] = set()
    for segment in segments:
        overlaps = [max(0.0, min(segment.end_s, p.end_s) - max(segment.start_s, p.start_s)) for p in placements]
        owner = int(np.argmax(overlaps))
        if overlaps[owner] <= 0.0:  # in the silence between clips or after them: a neighbour's words, or none
            unresolved.update(_near(placements, segment))
            continue
        reached = [position for position, overlap in enumerate(overlaps) if overlap > 0.0]
        if any(overlaps[position] > STRADDLE_S for position in reached if position != owner):
            unresolved.update(reached)
            continue
        tokens[owner].extend(segment.tokens)
        owned[owner].append(segment)
    for position, placement in enumerate(placements):
        if not owned[position]:
            unresolved.update(p for p in (position - 1, position, position + 1) if 0 <= p < len(placements))
        elif longest_uncovered_s(placement, owned[position]) > UNCOVERED_S:
            unresolved.add(position)
    return {p.index: tokens[position] for position, p in enumerate(placements) if position not in unresolved}


def longest_uncovered_s(placement: Placement, segments: Sequence[Segment]) -> float:
    """The longest stretch of the clip's time that none of ``segments`` (in order) covers."""
    longest, covered_to = 0.0, placement.start_s
    for segment in segments:
        longest = max(longest, min(segment.start_s, placement.end_s) - covered_to)
        covered_to = max(covered_to, segment.end_s)
    return max(longest, placement.end_s - covered_to)


def _near(placements: Sequence[Placement], segment: Segment) -> list[int]:
    """The clips on either side of a segment that lies between them (the last one for a segment after all)."""
    before = [position for position, p in enumerate(placements) if p.end_s <= segment.start_s]
    after = [position for position, p in enumerate(placements) if p.start_s >= segment.end_s]
    return ([before[-1]] if before else []) + ([after[0]] if after else [])


class PackingCounts:
    """How many clips an engine put in shared windows, and how many of those it decoded again alone (a clip alone
    in its window counts in neither)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one engine serves the build's threads
        self.packed = 0
        self.redone = 0

    def add(self, packed: int, redone: int) -> None:
        with self._lock:
            self.packed += packed
            self.redone += redone
