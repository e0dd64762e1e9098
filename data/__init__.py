"""Data shipped with s2sbench: task configs, voices and small demo items written for this project."""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
