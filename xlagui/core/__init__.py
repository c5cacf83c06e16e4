"""The Qt-free engine, in rooms that follow one comparison (docs/ARCHITECTURE.md, "The rooms"):
`files/` and `xla/` at the bottom, then `protocol/` (what crosses between processes), `data/` and
`model/`, `machine/`, `analysis/` (statistics over events), `worker/` (the child process),
`measure/` (its supervision) and `results/` (the record), and `compare/` on top (the one
comparison workflow, `compare.run`). Each imports only rooms below it; an import-linter
contract in pyproject.toml holds it.

Nothing here imports Qt, and nothing here imports TensorFlow at module level: TensorFlow is only
loaded inside the worker process (`python -m xlagui.core.worker.child`).
"""
