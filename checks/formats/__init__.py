"""Output formats for comind check: one module per format."""
