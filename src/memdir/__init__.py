"""memdir: long-term memory for LLM agents as a folder of markdown files."""

__version__ = "0.1.0"
