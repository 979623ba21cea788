"""Language registry: one module per language, each with the same small interface."""
