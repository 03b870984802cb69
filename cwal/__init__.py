"""cwal: confidence-weighted active learning for sequence labeling (UI- and database-free engine)."""

__version__ = "0.1.0"
