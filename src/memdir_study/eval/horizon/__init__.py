"""The horizon bench: one store built over a simulated year (`bench/horizon/`), scored at
checkpoints (docs/horizon.md). `run.py` keeps the run folder and builds the store month by
month through the product's one ingest; `score.py` measures a checkpoint; `report.py` turns
the rows into a table and growth plots."""
