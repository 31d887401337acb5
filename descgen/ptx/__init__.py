"""PTX: reading compiled kernels, in layers.

- :mod:`.lexer`: lines -> statements, labels, scope braces; operands as small trees.
- :mod:`.knownbits`, :mod:`.ranges`: the two abstract domains (bits fixed at compile time; value
  intervals) and their transfer functions.
- :mod:`.dataflow`: a function's statements with names resolved in scope, its control-flow graph,
  reaching definitions and the fixed point that gives each operand its :class:`~.dataflow.Value`.
- :mod:`.slicer`: a function's lines -> the statements its descriptor operands can depend on (the
  scanner's fast reader; the lexer reads what it cannot).
- :mod:`.scan`: the scanner: every ``tcgen05.mma`` / ``tcgen05.cp``, each operand's value checked
  with :func:`descgen.check_mma`.
"""
