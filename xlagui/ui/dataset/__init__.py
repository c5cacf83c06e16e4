"""The Dataset tab: the scan, its thumbnails, its problems, an image's preview."""
