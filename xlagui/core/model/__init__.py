"""The models a comparison can train, and how a worker builds them.

What a user chose is a `xlagui.core.protocol.config.ModelChoice` (Qt- and TensorFlow-free; it
travels in `RunConfig.model`). The modules here turn it into a compiled Keras model inside a worker
process:

- `builtin`: the built-ins by name (the article's CNN stays in `xlagui.core.model.cnn`);
- `files`: a saved `.keras` file and a Python file defining `build_model`;
- `build`: the one entry point a worker calls, whatever the source;
- `check`: the one-shot check before any measuring (`python -m xlagui.core.worker.child
  --check-model SPEC.json`): builds the model once and answers with a `ModelEvent` (parameters,
  input size, work and memory per step) or an `ErrorEvent` naming the file and line.

Nothing here imports TensorFlow or Keras at module level.
"""
