"""The settings of a comparison: the form, the model, the machine."""
