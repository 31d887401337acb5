"""The tables compiled: reading and checking tables/*.toml (loader; the records they compile to, table_types; the
per-user cache of parsed tables, table_cache), the generic field engine (engine; a word as given and encoded, word;
a decoded word, decoded), the catalog and its constraint tables (catalog, report), the instruction context (context),
and the facts the tables imply (facts, wgmma_facts)."""
