"""Where a training step's time goes: a profiler trace read (`trace`), XLA's instruction names
mapped back to TensorFlow ops (`hlo_names`), every kernel or thunk attributed to a layer, a pass
and an op kind (`ops`, `attribute`)."""
