"""The child process that trains or measures one configuration (`python -m
xlagui.core.worker.child`)."""
