"""Publishing a build: the Hub layout and dataset card, a resumable upload, and the original S2SBench layout.

- :mod:`.card` describes a build (sources, voices, engines, ASR gate, counts) and renders the dataset card.
- :mod:`.hub` stages the Hub folder (parquet shards with embedded audio, one config per task and voice), uploads it
  with retries and resume, and loads it back to compare row counts and audio hashes.
- :mod:`.original` exports and imports the JSONL + wav layout of the original S2SBench release.
"""
