"""Adapters that put a memdir store behind other frameworks' tool interfaces."""
