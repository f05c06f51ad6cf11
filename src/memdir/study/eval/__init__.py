"""Evaluation: judges (LLM and offline), paired statistics; the runner builds on these."""
