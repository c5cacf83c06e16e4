"""xlagui: does XLA make my TensorFlow model train faster, by how much, and at what cost?"""

from __future__ import annotations

__version__ = "0.1.0"
APP_NAME = "xlagui"
APP_ID = "io.github.xlagui.XlaGui"
