"""descgen's version (one home: the package, the emitters' headers and the JSON envelopes read it)."""

__version__ = "0.1.0"
