"""The History tab: past comparisons, listed and reopened."""
