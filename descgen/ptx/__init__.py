"""PTX: reading compiled kernels, in layers.

- :mod:`.lexer`: lines -> statements, labels, scope braces; operands as small trees.
- :mod:`.knownbits`, :mod:`.ranges`: the two abstract domains (bits fixed at compile time; value
  intervals) and their transfer functions; :mod:`.values`: a :class:`~.values.Value`, both
  domains refined by each other.
- :mod:`.dataflow`: a function's statements with names resolved in scope (:mod:`.statements`),
  its control-flow graph and reaching definitions (:mod:`.cfg`), each opcode's transfer function
  (:mod:`.transfer`) and the fixed point (:mod:`.solver`) that gives each operand its
  :class:`~.values.Value`.
- :mod:`.slicer`: a function's lines -> the statements its descriptor operands can depend on (the
  scanner's fast reader; the lexer reads what it cannot); :mod:`.skipping`: what is not read at all.
- :mod:`.qualifiers`: an instruction's opcode and operands read into typed records.
- :mod:`.scan`: the scanner: every ``tcgen05.mma`` / ``tcgen05.cp`` / ``wgmma.mma_async``, each
  operand's value checked with :func:`descgen.check_mma` (:mod:`.instruction_checks`), the
  ``PTX-*`` rules (:mod:`.syntax_rules`), the records it gives (:mod:`.results`).
- :mod:`.files`: many files scanned, one by one or by forked workers.
"""
