"""Benchmark data loaders: they read `MEMDIR_DATA` and import nothing of ours but `store`."""
