"""Child process of bench_training.py: train the article's CNN from in-memory tensors.

    python bench/_fit_in_memory.py ARRAYS.npz plain|pipeline EPOCHS BATCH AUGMENT SEED

`plain`: a plain Keras `fit` on numpy arrays (what P1 compares against).
`pipeline`: xlagui's per-epoch tf.data stages over the same arrays held in memory (P2).
Prints one JSON line: the seconds of each epoch.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main() -> int:
    path, kind, epochs, batch, augment, seed = sys.argv[1:7]
    import keras
    import numpy as np
    import tensorflow as tf

    from xlagui.core.data.pipeline import training_batches, validation_batches
    from xlagui.core.model.cnn import build_model, compile_model

    tf.config.optimizer.set_jit(False)
    keras.utils.set_random_seed(int(seed))
    data = np.load(path)
    x, y, xv, yv = data["x"], data["y"].astype("float32"), data["xv"], data["yv"].astype("float32")
    size = x.shape[1]
    model = build_model(size, 2, seed=int(seed))
    compile_model(model, 2, jit_compile=False)
    times: list[float] = []

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.t0 = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            times.append(time.perf_counter() - self.t0)

    if kind == "plain":
        n = (len(x) // int(batch)) * int(batch)  # the same full batches xlagui trains on
        model.fit(
            x[:n].astype("float32") / 255.0,
            y[:n],
            batch_size=int(batch),
            epochs=int(epochs),
            validation_data=(xv.astype("float32") / 255.0, yv),
            shuffle=True,
            verbose=0,
            callbacks=[Timer()],
        )
    else:
        base = tf.data.Dataset.from_tensor_slices((x, y)).cache()
        vbase = tf.data.Dataset.from_tensor_slices((xv, yv)).cache()
        train = training_batches(
            base, len(x), batch_size=int(batch), seed=int(seed), augment=augment == "1"
        )
        model.fit(
            train,
            validation_data=validation_batches(vbase, int(batch)),
            epochs=int(epochs),
            verbose=0,
            callbacks=[Timer()],
        )
    print(json.dumps({"epoch_seconds": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
