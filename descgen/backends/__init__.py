"""Back-ends: code generators over descgen's words (run-time descriptor functions, headers)."""
