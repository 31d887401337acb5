"""CUTLASS's 64-bit runtime instruction descriptor (errata E31).

CuTe builds the ``tcgen05.mma`` instruction descriptor as a 64-bit value
(``cute::UMMA::make_runtime_instr_desc`` and ``make_runtime_instr_desc_block_scaled`` in
``cute/arch/mma_sm100_desc.hpp``): the 32-bit instruction descriptor of PTX Tables 42-44 in the
**upper** 32 bits; the lower 32 bits are the slot its comment names for the tensor memory
address of the sparsity metadata, which CUTLASS leaves 0 (the argument is not used), and the
``tcgen05.mma`` wrappers of ``mma_sm100_umma.hpp`` pass only the upper half to the instruction.
The block-scaled variant copies bits 30-31 of the scale factor tensor memory addresses (the
byte of the 32-bit cell) into the descriptor's A/B scale factor ID fields before shifting.

So a 64-bit word from a CUTLASS kernel's register or a debugger is read as ``word >> 32`` when
its low half is 0; a 64-bit word with a nonzero low half is no instruction descriptor in any
form (a shared memory descriptor given with ``--kind``, say) and is refused, never read as
its upper half.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.catalog import usage_error
from ..model.engine import check_word
from ..core.errors import WordError

__all__ = ["RuntimeIdesc", "idesc_from_runtime"]


@dataclass(frozen=True, slots=True)
class RuntimeIdesc:
    """A 64-bit CUTLASS runtime instruction descriptor, split.

    Attributes:
        word: the 64-bit value (``idescE`` in CuTe).
        idesc: its upper 32 bits: the PTX instruction descriptor (Tables 42-44).
        low: its lower 32 bits: the sparse metadata tensor memory address slot (0 from CUTLASS).
    """

    word: int
    idesc: int
    low: int

    @property
    def note(self) -> str:
        """One sentence saying how the word was read and what the low 32 bits were."""
        text = (f"read as CUTLASS's 64-bit runtime instruction descriptor (make_runtime_instr_desc): the idesc is the "
                f"upper 32 bits, {self.idesc:#010x}; the low 32 bits were {self.low:#010x}")
        return f"{text} (CUTLASS writes 0 there; tcgen05.mma takes only the upper half) (E31)"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: hex strings."""
        return {"form": "cutlass_runtime", "word": f"{self.word:#018x}", "idesc": f"{self.idesc:#010x}",
                "low": f"{self.low:#010x}", "note": self.note}


def idesc_from_runtime(word: int) -> RuntimeIdesc:
    """Split CUTLASS's 64-bit runtime instruction descriptor (``make_runtime_instr_desc``):
    ``.idesc`` is the upper 32 bits (decode it with :func:`descgen.decode_idesc`), ``.low`` the
    lower 32 (the sparse metadata address slot, which CUTLASS leaves 0), ``.note`` says so.

    ``idesc_from_runtime(0x0840001000000000).idesc == 0x08400010`` (f16, M = 128, N = 256).

    Raises:
        WordError: ``word`` is not an unsigned 64-bit integer (``IDESC-WORD-RANGE``), or its low
            32 bits are not 0, so that it is no runtime instruction descriptor
            (``IDESC-RUNTIME-LOW``: ``descgen decode WORD`` says what it may be).
    """
    check_word(word, 64, "idesc")
    low = word & 0xFFFFFFFF
    if low:
        raise usage_error("IDESC-RUNTIME-LOW", "word", word, "a 32-bit word, or a 64-bit one whose low 32 "
                          "bits are 0", f"its low 32 bits are {low:#010x} (descgen decode {word:#018x} says what it "
                          "may be)", error=WordError)
    return RuntimeIdesc(word, word >> 32, low)
