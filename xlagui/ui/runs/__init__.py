"""The Runs tab and what runs a comparison: the supervisor and its controller, a column per
side, the comparison panel."""
