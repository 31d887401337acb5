"""Placeholder; the click application is written next."""
def main() -> None:  # pragma: no cover
    raise SystemExit("not yet")
