"""The tables compiled: reading and checking tables/*.toml (loader), the generic field engine (engine), the
catalog and its constraint tables (catalog, report), the instruction context (context), and the facts the
tables imply (facts, wgmma_facts)."""
