"""The parent side: one supervisor of every child process (`worker_process.ChildProcess`), what
each child is asked (`jobs`), the training runs (`runner`), the interleaved measurement
(`interleave`), the model check and the short children (`model_check`, `children`), and the
transports that start them here or on a host (`transports/`)."""
