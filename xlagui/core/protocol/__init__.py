"""What travels between processes and into saved files: the run's configuration, arms and modes,
the event protocol, the worker's spec, cancellation."""
