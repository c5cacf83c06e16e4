"""Files the app keeps: atomic writes, the app's folders, its log."""
