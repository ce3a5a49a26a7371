"""The operator's dashboard (Textual). `model` and `history` are UI-free; the rest is widgets."""
