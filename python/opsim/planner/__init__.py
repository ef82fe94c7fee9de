"""The OP planner: capacity and OP arithmetic (``capacity``), endurance (``endurance``),
read-only drive probing (``probe``) and the per-mechanism procedures (``plan``).

Pure Python; nothing here needs the Rust core.  See docs/planner.md.
"""
