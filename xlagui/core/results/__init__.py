"""A comparison's record: the report, its files (JSON, CSV), the history of past comparisons,
reading HLO dumps back."""
