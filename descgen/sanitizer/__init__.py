"""The descriptor sanitizer: run-time checks of descriptor operands in PTX (docs/sanitizer.md)."""
