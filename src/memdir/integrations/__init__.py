"""Adapters that put a memdir store behind other frameworks' tool interfaces.

`anthropic_memory.py`: Anthropic's `memory_20250818` tool served from a memdir store, a drop-in
for the SDK's local helper; it calls through the caller's harness (a `Memory`'s), so its calls
are metered, guarded and journaled with the rest.
"""
