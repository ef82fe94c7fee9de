"""The OP planner: capacity and OP arithmetic (``capacity``), endurance (``endurance``),
the per-mechanism procedures (``plan``) and NVMe FDP (``fdp``); the drive is probed by
:mod:`opsim.devices.probe`.

The capacity arithmetic is exact Python (pinned to the core by tests/core/test_core_truth_op.py);
the advisor (``advise``) asks the Rust core for the resolved drive, timing and costs.  See
docs/planner.md.
"""
