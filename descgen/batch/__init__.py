"""Batch mode: JSON-lines requests in, one JSON line per request out, errors as data.

Each input line is one JSON object, a request::

    {"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "id": 7}
    {"op": "encode", "descriptor": "smem", "start_address": 1024, "lbo": 16, "sbo": 1024, "swizzle": "128B"}
    {"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B", "mn": 128, "k": 64, "start_address": 1024}
    {"op": "encode", "descriptor": "zcm", "skip_span": 1, "use_span": 13, "start_count": [1, 3, 5, 7], "m": 32, "n": 64}
    {"op": "decode", "word": "0x08400010", "kind": "f16"}
    {"op": "validate", "word": "0x08400010", "kind": "f16", "cta_group": 1, "ws": false}
    {"op": "check", "idesc": "0x08400010", "kind": "f16", "a_desc": "0x4000404000010040", "b_desc": "0x4000404000010440"}

and gets one response line::

    {"line": 1, "id": 7, "ok": true, "word": "0x08400010", "findings": []}
    {"line": 9, "ok": false, "error": {"type": "UsageError", "message": "...", "findings": [...]}}

Keys are the keyword arguments of the API (so their documentation is the API's):
:func:`descgen.encode_idesc`, :func:`descgen.encode_smem`, :func:`descgen.smem_for_tile` (the
tile form of an smem encode, chosen by any of ``mn``, ``k``, ``dtype``, ``major``,
``atom_order``, ``kind``), :func:`descgen.encode_zcm`, the context keywords of
:func:`descgen.validate_idesc` / ``validate_smem`` / ``validate_zcm``, and :func:`descgen.check_mma`.
``check`` (``check=False``) is not a key: batch mode is strict. A key the request's op and
descriptor do not take is an error naming the key and the allowed keys (``BATCH-KEY``), never
ignored.

Answers are brief by default, what a generator or a script needs: an encode's ``word`` and
``findings`` (and a zcm's ``mask`` hex for m and n); a decode's ``descriptor``, ``kind``,
``word``, ``fields`` (``{name: value}``), ``derived`` and ``findings`` (several layouts tried:
``consistent`` and ``results``); a validate's or check's ``findings`` and ``not_checked`` codes.
With ``full`` (``descgen batch --full``) the answer mirrors the CLI's ``--json`` envelope without
``descgen``/``command``/``input``: ``result`` (and ``defaults``, ``mask``, ``tile``,
``consistent``/``results``) exactly as ``descgen idesc|smem|zcm|decode|validate|check --json``
prints them (:meth:`descgen.Decoded.as_dict`, :meth:`descgen.Report.as_dict`). A request about
one word or instruction may add ``format`` (and ``name``): the answer then carries ``code``,
:func:`descgen.emit`'s text; with ``"functions": true`` (``format`` c, cpp, ptx or python) it is
:func:`descgen.emit_functions`' instead: the word's fixed part as a checked constant and its
run-time functions (a shared memory descriptor's ``NAME(smem_addr)`` and, of a tile, ``NAME_k``
and ``NAME_stage``, whose step ``stage_bytes`` sets; of one given by its fields, ``NAME_advance``;
an idesc's scale factor IDs or sparsity selector; a zcm's column shift), as ``descgen smem``
without ``--addr`` and ``idesc``/``zcm --functions`` write them (an smem encode's
``start_address`` may then be left out: 0). Words come back as
hex strings zero-padded to their width (``"0x08400010"``, 16 digits for 64-bit words; JSON
consumers cannot all hold 64-bit integers); words may be given as JSON integers or as strings in
decimal, ``0x`` hex or ``0b`` binary (``_`` separators allowed), or hex pasted without ``0x`` read
as the command line reads it (:mod:`descgen.core.numbers`: ``"08400010"`` is 0x08400010), the answer's
``notes`` saying which reading was taken.

``ok`` is what the CLI's exit status would say: true when the command would exit 0 (an encode
that succeeded, a decode/validate/check with no error finding). A refused request carries
``error`` (the CLI's ``error_dict``: ``type``, ``message``, ``findings``); a decode, validate or
check of a word with error findings carries its ``result`` with ``ok`` false. ``line`` is the
1-based input line; ``id`` (any JSON value) is echoed when given. Blank lines and lines whose
first non-blank character is ``#`` are not requests: they produce no output but are counted in
``line``.

Errors are data: a malformed line (``BATCH-JSON``: not JSON, NaN/Infinity, a duplicate key, not
an object), an unknown or missing op (``BATCH-OP``), descriptor (``BATCH-DESCRIPTOR``), an
unknown key (``BATCH-KEY``), a missing key (``BATCH-KEY-MISSING``), a word that is not an
unsigned integer (``BATCH-WORD``), a wrong type or a value that breaks a PTX rule (the
library's own codes). A failure inside descgen itself (a bug) is reported as
``"type": "InternalError"`` and the run goes on.

Results are pure functions of the request: :func:`run` keeps an LRU cache of responses keyed on
the request (without ``id``); full answers are serialized from cached per-field JSON fragments.

The modules, by concern: :mod:`~descgen.batch.schema` (the keys each op and descriptor takes, read
from the API's own signatures; a request's keys and words checked; the ``BATCH-*`` errors),
:mod:`~descgen.batch.handlers` (each op answered: the brief and the full form, code on request),
:mod:`~descgen.batch.codec` (JSON lines read strictly and written fast),
:mod:`~descgen.batch.cache` (the answer cache and its request keys) and
:mod:`~descgen.batch.stream` (lines answered one by one or in chunks of alike requests, counted).
"""  # noqa: E501 (the request examples: one line each)

from __future__ import annotations

from .cache import ResponseCache
from .handlers import handle
from .schema import DESCRIPTORS, OPS, request_keys
from .stream import BatchStats, response_line, run

__all__ = ["OPS", "DESCRIPTORS", "BatchStats", "ResponseCache", "handle", "run", "response_line", "request_keys"]
