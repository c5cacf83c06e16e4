"""The parent side: one `WorkerProcess` supervisor, training runs, interleaved measuring, the model
check, remote hosts."""
