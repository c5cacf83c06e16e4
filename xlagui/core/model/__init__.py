"""The models a comparison can train: a registry of model sources, and how a worker builds them.

What a user chose is a `xlagui.core.protocol.config.ModelChoice` (Qt- and TensorFlow-free; it
travels in `RunConfig.model`); its `source` names one of the sources registered here:

- `source`: what a source is (`ModelSource`: describe, choose and check on the parent's side,
  build in a worker; `FileSource` for a model that is one file);
- `sources`: the registry (`SOURCES`), and what everyone asks it: the built-ins' names, the file
  suffixes, `parse_model` (`--model`'s value), `check`, `describe`, `needed_files` and `placed`
  (a model file on another machine);
- the sources: `builtin` (the built-ins by name; the article's CNN stays in
  `xlagui.core.model.cnn`), `keras_file` (a saved `.keras`), `python_file` (a Python file
  defining `build_model`); `files` is what the sources of files share;
- `build`: the one entry point a worker calls, whatever the source;
- `check`: the one-shot check before any measuring (`python -m xlagui.core.worker.child
  --check-model SPEC.json`): builds the model once and answers with a `ModelEvent` (parameters,
  input size, work and memory per step) or an `ErrorEvent` naming the file and line.

Nothing here imports TensorFlow or Keras at module level, and no user code is run outside a
worker.
"""
