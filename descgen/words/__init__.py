"""The words and what is done with one: encode, decode and validate each descriptor (idesc, smem, zcm, taddr,
wgmma_smem, CUTLASS's runtime idesc), one instruction checked (instruction), a bare word identified
(identify), ported between families (port) and compared (compare)."""
