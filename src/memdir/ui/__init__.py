"""`memdir ui`: a read-only web page over a store, its health and its history (docs/ui.md).

A thin outer layer like `cli`: every read goes through memdir's own APIs (the `Store`, the
analytics, the journal, the Memory API's search), so paths are confined exactly as the tools
confine them, and nothing here writes a memory file.
"""
