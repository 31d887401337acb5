"""A PTX function's statements as the dataflow reads them (:class:`Instr`): the registers each
writes and reads, names resolved to keys (a ``%``-name is the function's register unless a scope
declares it; special registers and symbols are no register), and how control leaves it
(``bra``, ``brx.idx``, ``ret``...). :class:`descgen.ptx.dataflow.Function` makes them, resolving
names in the scopes open where each statement is read.
"""

from __future__ import annotations

import functools
from typing import Callable

from .lexer import Operand, parse_operand, split_operands

__all__ = ["Instr", "is_special", "own_register", "resolved_operand", "dest_keys", "own_dests", "registers_of",
           "operand_text", "NO_DEST", "CONTROL", "SPECIAL_PREFIXES"]

#: The special registers' name prefixes (PTX ISA §10).
SPECIAL_PREFIXES = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
                    "%gridid", "%lanemask", "%clock", "%globaltimer", "%cluster", "%is_explicit_cluster",
                    "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size", "%envreg", "%pm", "%reserved_smem",
                    "%current_graph_exec")


def is_special(name: str) -> bool:
    """True for a special register (``%tid.x``, ``%laneid``, ``%clock64``...)."""
    return name[:1] == "%" and name.startswith(SPECIAL_PREFIXES)


#: Opcodes whose first operand, when a register, is read, never written (``bar.sync %r``,
#: ``brx.idx %r, tbl``, ``nanosleep.u32 %r``); every other statement's first operand is its
#: destination when it is a register, a vector, a ``|`` pair or ``_`` (an address ``[...]`` is not).
NO_DEST = frozenset(("bar", "barrier", "bra", "brx", "ret", "exit", "trap", "st", "red", "prefetch", "prefetchu",
                     "nanosleep", "fence", "membar", "griddepcontrol", "setmaxnreg", "pmevent", "stmatrix",
                     "discard", "applypriority"))
#: How control leaves a statement, by opcode (every other falls through): see :class:`Instr`'s ``flow``.
CONTROL = {"bra": "jump", "brx": "any", "ret": "stop", "exit": "stop", "trap": "stop"}


class Instr:
    """One statement of a function, names resolved.

    Attributes:
        line: its first line in the file.
        guard: the key of its guard predicate (``@%p`` / ``@!%p``), or None.
        opcode: with every qualifier (``add.s32``, ``mov.b64``).
        dests: the register keys it writes, None for ``_`` (empty for none).
        srcs: its source operands, registers resolved to ``("reg", key)``. Read when first asked
            for: most statements are never in a descriptor's slice. A statement that names no
            register declared in an open scope resolves its names without those scopes, so
            parsing it later gives what parsing it at once would.
        flow: ``"fall"``, ``"jump"`` (``bra``), ``"any"`` (``brx.idx``), ``"stop"`` (``ret``...).
        target: a ``bra``'s label and the scope chain it was written in.
    """

    __slots__ = ("line", "guard", "opcode", "dests", "_srcs", "_rest", "_skip", "flow", "target")

    def __init__(self, line: int, guard: str | None, opcode: str, dests: tuple[str | None, ...],
                 srcs: tuple[Operand, ...] | None, rest: str = "", skip: int = 0, flow: str = "fall",
                 target: tuple[str, tuple[int, ...]] | None = None) -> None:
        self.line, self.guard, self.opcode, self.dests = line, guard, opcode, dests
        self._srcs, self._rest, self._skip = srcs, rest, skip
        self.flow, self.target = flow, target

    @property
    def srcs(self) -> tuple[Operand, ...]:
        if self._srcs is None:
            texts = split_operands(self._rest)[self._skip:]
            self._srcs = tuple(resolved_operand(parse_operand(t), own_register) for t in texts)
        return self._srcs


def dest_keys(op: Operand, resolve: Callable[[str], str | None]) -> tuple[str | None, ...]:
    """The register keys a destination operand writes, in order (None for ``_`` and for what is
    no register), names resolved by ``resolve``."""
    kind = op[0]
    if kind in ("vec", "pair"):
        return tuple(k for o in op[1] for k in dest_keys(o, resolve))
    if kind == "name":
        return (resolve(str(op[1])),)
    return (None,)


@functools.lru_cache(maxsize=65536)
def own_dests(op: Operand) -> tuple[str | None, ...]:
    """:func:`dest_keys` where no scope declares names (most statements; cached)."""
    return dest_keys(op, own_register)


def own_register(name: str) -> str | None:
    """A name's key where no scope declares names: a ``%``-name is the function's register."""
    return name if name[:1] == "%" and not name.startswith(SPECIAL_PREFIXES) else None


def resolved_operand(op: Operand, resolve: Callable[[str], str | None]) -> Operand:
    """``op`` with its names resolved: ``("reg", key)``, ``("special", name)`` or ``("sym",
    name, 0)``."""
    kind = op[0]
    if kind == "name":
        name = op[1]
        if is_special(name):
            return ("special", name)
        key = resolve(name)
        return ("reg", key) if key is not None else ("sym", name, 0)
    if kind in ("vec", "pair"):
        return (kind, tuple(resolved_operand(o, resolve) for o in op[1]))
    return op


def registers_of(op: Operand) -> list[str]:
    """The register keys a resolved operand reads, in order."""
    kind = op[0]
    if kind == "reg":
        return [str(op[1])]
    if kind in ("vec", "pair"):
        out: list[str] = []
        for o in op[1]:
            out += registers_of(o)
        return out
    return []


def operand_text(op: Operand) -> str:
    """A resolved operand written back as text (``{%r1, %r2}``, ``smem+16``): for reasons."""
    kind = op[0]
    if kind in ("vec", "pair"):
        inner = ", ".join(operand_text(o) for o in op[1])
        return "{" + inner + "}" if kind == "vec" else inner.replace(", ", "|")
    if kind == "sink":
        return "_"
    if kind == "sym":
        return f"{op[1]}+{op[2]}" if op[2] else str(op[1])
    return str(op[1])
