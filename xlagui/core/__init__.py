"""The Qt-free engine: dataset scan, input pipeline, model, worker processes, statistics, export.

Nothing here imports Qt, and nothing here imports TensorFlow at module level: TensorFlow is only
loaded inside the worker process (`python -m xlagui.core.worker.child`).
"""
