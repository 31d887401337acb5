"""Findings and the exception hierarchy.

Every problem descgen reports is a :class:`Finding`: a stable code, a severity, the field, the
value, the allowed values, the rule in one sentence and its PTX source. Decoding returns findings;
encoding raises a :class:`DescgenError` subclass that carries them. ``str(error)`` is the message a
user reads: field, value, allowed values, rule — no traceback needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "SEVERITIES",
    "Finding",
    "DescgenError",
    "EncodeError",
    "WordError",
    "UsageError",
    "TableError",
]

#: Severities, most serious first.
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem with a descriptor word or with the values asked of an encoder.

    Attributes:
        code: stable identifier, ``WORD-FIELD-CHECK`` (e.g. ``IDESC-N-RANGE``, ``SMEM-RESERVED-14``).
        severity: ``"error"`` (breaks a PTX rule), ``"warning"`` (legal but suspicious, or ignored
            by the hardware) or ``"info"``.
        field: the descriptor field (or API argument) concerned.
        value: the offending logical value (or raw bits for reserved/constant fields).
        allowed: the allowed values, as text.
        rule: the rule, in one sentence.
        source: where PTX states the rule (section / table).
    """

    code: str
    severity: str
    field: str
    value: Any
    allowed: str
    rule: str
    source: str

    def __str__(self) -> str:
        return (
            f"{self.severity} {self.code}: {self.field} = {_show(self.value)}: {self.rule} "
            f"(allowed: {self.allowed}) [{self.source}]"
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the value is kept if it is a JSON scalar, else shown as text)."""
        value = self.value if isinstance(self.value, (int, str, bool, type(None))) else _show(self.value)
        return {
            "code": self.code,
            "severity": self.severity,
            "field": self.field,
            "value": value,
            "allowed": self.allowed,
            "rule": self.rule,
            "source": self.source,
        }


def _show(value: Any) -> str:
    if value is None:  # a value that was not given (the kind of an e2m1 layout, a missing key)
        return "(not given)"
    if isinstance(value, bool):  # as PTX, the tables and every allowed list write a flag
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -1024 < value < 1024 else f"{value} ({value:#x})"
    return repr(value)


class HasFindings:
    """``codes``, ``errors``, ``warnings`` and ``ok`` over a result's ``findings`` (anything with
    ``.code`` and ``.severity``): shared by :class:`descgen.Decoded`, :class:`descgen.Report` and
    :class:`descgen.ptx.scan.ScanResult`."""

    __slots__ = ()
    findings: tuple[Any, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        """The findings' codes, in order."""
        return tuple(f.code for f in self.findings)

    @property
    def errors(self) -> tuple[Any, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Any, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when no finding is an error (warnings allowed)."""
        return not any(f.severity == "error" for f in self.findings)


class DescgenError(Exception):
    """Root of every error descgen raises.

    Attributes mirror :class:`Finding` (``code``, ``field``, ``value``, ``allowed``, ``rule``,
    ``source``) for the first error; ``findings`` holds all of them.
    """

    def __init__(self, findings: tuple[Finding, ...] | list[Finding], context: str = "") -> None:
        self.findings: tuple[Finding, ...] = tuple(findings)
        first = self.findings[0]
        self.code = first.code
        self.field = first.field
        self.value = first.value
        self.allowed = first.allowed
        self.rule = first.rule
        self.source = first.source
        self.context = context
        super().__init__(self._message())

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its findings and context (an error raised in a worker process reaches the
        parent whole: ``descgen scan --jobs``, ``descgen batch --jobs``)."""
        return (type(self), (self.findings, self.context))

    def _message(self) -> str:
        head = f"{self.context}: " if self.context else ""
        errors = [f for f in self.findings if f.severity == "error"] or list(self.findings)
        if len(errors) == 1:
            return head + _plain(errors[0])
        return head + f"{len(errors)} problems:\n" + "\n".join("  - " + _plain(f) for f in errors)


def _plain(f: Finding) -> str:
    return f"{f.field} = {_show(f.value)}: {f.rule}; allowed: {f.allowed} [{f.source}; {f.code}]"


class EncodeError(DescgenError, ValueError):
    """A value asked of an encoder breaks a PTX rule (out of range, misaligned, unknown member)."""


class WordError(DescgenError, ValueError):
    """A word given to a decoder is not a 32- or 64-bit unsigned integer."""


class UsageError(DescgenError, ValueError):
    """The call itself is wrong: unknown kind, a field that does not exist for this kind."""


class TableError(DescgenError):
    """A file in ``tables/`` is malformed; the message names the file and the field."""

    def __init__(self, path: str, where: str, message: str) -> None:
        finding = Finding(
            code="TABLE-MALFORMED",
            severity="error",
            field=where,
            value=path,
            allowed="see the table format in tables/README.md",
            rule=message,
            source=path,
        )
        self.path = path
        self.where = where
        super().__init__((finding,))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.where, self.rule))

    def _message(self) -> str:
        return f"{self.path}: {self.where}: {self.rule}"
