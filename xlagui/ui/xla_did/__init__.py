"""The "What XLA did" tab."""
