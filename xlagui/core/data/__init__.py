"""The images: the dataset scan, the tf.data pipeline, the demo set, exclusions."""
