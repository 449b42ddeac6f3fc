"""Expected bands: what a figure of a kind of host should be, declared by a person (versioned) or learned from the
newest valid figures of its siblings; `judge` sets one figure against them (docs/methodology/verdicts.md)."""
from app.bands import links

links.connect()  # a mesh's cells are judged against the bands wherever the bands are loaded (the API, the worker)
