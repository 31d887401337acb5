"""The validation commands: ``descgen validate | check | explain | rules``.

Registered on the group of :mod:`descgen.cli.app` when :mod:`descgen.cli` is imported. Like the
rest of the CLI, they import click and descgen only; rich loads when a table is drawn.
"""

from __future__ import annotations

from typing import Any

import click

import descgen
from descgen.model.catalog import APPLIES as APPLIES_TO, USAGE_APPLIES, catalog, layout_table
from descgen.codes import all_codes, field_codes, usage_codes
from descgen.examples import example, examples_for, rules_markdown, unreachable

from .options import output_options
from .encoders import renderer, wgmma_arch
from .context import APPLIES, check_applies, context_options
from .output import (EXIT_RULE, ROLES, Output, hex_word, paged, pager_option, plain_finding, plain_not_checked, role_of,
                     word_as)
from .params import UINT, WORD, KindType, LazyChoice, TypeChoice, descriptor_names

__all__ = ["validate", "check", "explain", "rules", "verbose_options"]


def verbose_options(f: Any) -> Any:
    """``-v/--verbose`` and ``--exit-zero`` for the commands that validate."""
    f = click.option("--exit-zero", is_flag=True,
                     help="Exit 0 even when an error finding is present (usage errors still exit 2).")(f)
    f = click.option("-v", "--verbose", is_flag=True,
                     help="Also list the rules not checked because their context was not given.")(f)
    return f


def _finish(report: descgen.Report, exit_zero: bool) -> None:
    if not report.ok and not exit_zero:
        click.get_current_context().exit(EXIT_RULE)


# --------------------------------------------------------------------------------------------
# validate


@click.command(short_help="Check one descriptor word against every PTX rule, with the instruction's context.")
@click.argument("word", type=WORD)
@click.option("--as", "as_", type=LazyChoice(descriptor_names),
              help="Descriptor type (taddr: a tensor memory address). Default: chosen as descgen decode chooses "
                   "(a note on stderr says which reading was validated).")
@click.option("--kind", type=KindType(), help="MMA kind of an instruction descriptor (implies --as idesc).")
@context_options(wgmma=True)
@verbose_options
@output_options
def validate(out: Output, word: int, as_: descgen.Descriptor | None, kind: descgen.Kind | None, context: dict[str, Any],
             verbose: bool, exit_zero: bool) -> None:
    """Validate WORD: every rule of its descriptor type, with the context given.

    \b
    Which descriptor:
      --kind K (--as idesc)  an instruction descriptor under .kind::K (its rules depend
                             on the kind)
      --as smem | zcm        a shared memory / zero-column mask descriptor
      --as taddr             a 32-bit tensor memory address (lane, column)
      (no --as, no --kind)   read as descgen decode reads it: below 2**32 an idesc under
                             the first kind it is consistent with; wider, smem or zcm
                             (or CUTLASS's runtime idesc), whichever decodes with no
                             error and the fewest findings. A note on stderr (JSON:
                             "identified") names the reading and the other consistent ones
    A 64-bit word with --kind (--as idesc) is CUTLASS's runtime form: its upper 32 bits are
    validated, and a note on stderr (JSON: "runtime") says so (errata E31); one whose low 32
    bits are not 0 is no instruction descriptor in any form: a usage error (exit 2).

    \b
    Context (each option applies to the words whose rules use it):
      idesc  --cta-group --ws/--no-ws --sp/--no-sp --scale-vec --a-tmem/--no-a-tmem --arch
      smem   --arch --pattern-start
      zcm    --m --n --ws/--no-ws
      taddr  --warp --alloc-columns --alloc-base
    A rule whose context is not given is not guessed: -v lists it as not checked.

    \b
    Output:
      terminal (--table)   each finding: severity, code, field = value, rule, allowed,
                           source; then a summary (and with -v the rules not checked)
      piped (--plain)      one line per finding, nothing when clean:
                             SEVERITY CODE FIELD=VALUE: rule [source]
                           with -v also: not-checked CODE needs=NAME,...: rule [source]
      --json               the envelope; "result" holds ok, context, findings,
                           not_checked and the decoded word

    \b
    Exits 1 when a finding is an error (after printing), unless --exit-zero.

    \b
      descgen validate 0x08020010 --kind f16 --cta-group 2
      descgen validate 0x4000404000010058 --as smem --pattern-start 0x580 -v
    """
    from descgen.words.identify import identify  # loaded by the commands that read bare words (start-up)

    if as_ is None and kind is None and any(context[n] is not None for n in APPLIES["taddr"]):
        raise click.UsageError("--warp, --alloc-columns and --alloc-base apply to tensor memory addresses: "
                               "add --as taddr")
    if kind is not None and as_ not in (None, "idesc"):
        raise click.UsageError(f"--kind applies to instruction descriptors, not --as {as_}")
    if kind is None and as_ in (None, "wgmma_smem") and word >> 32 and wgmma_arch(context):
        as_, context = "wgmma_smem", {**context, "arch": None}  # --arch sm_90a: the wgmma shared memory descriptor
    if kind is not None:
        check_applies(context, "idesc")
    elif as_ is not None:
        check_applies(context, as_)
    ctx = {name: context[name] for name in context if context[name] is not None}
    found = identify(word, descriptor=as_, kind=kind, **ctx)
    reading = found.best
    read_as = reading.descriptor  # (a descriptor name: identify chose it)
    check_applies(context, read_as)
    out.input = {"word": word_as(word, read_as), "as": read_as,
                 "kind": reading.kind if kind is None and read_as == "idesc" else kind, **context}
    ctx = {name: context[name] for name in APPLIES[read_as]}
    report = reading.report
    runtime = reading.runtime.as_dict() if reading.runtime else None
    chosen = None
    if found.asked != "kind" and len(found.readings) > 1:  # chosen as descgen decode chooses (identify)
        others = [f".kind::{r.kind}" if r.kind else r.descriptor for r in found.consistent if r is not reading]
        chosen = {"reading": reading.name, "why": (
            "the first reading with no error finding" if reading.ok
            else "no reading is free of errors; the one with the fewest"),
            "consistent": [r.name for r in found.consistent]}
        if not out.json:
            what = f".kind::{reading.kind}" if reading.kind else reading.descriptor
            also = f"; also consistent: {', '.join(others)}" if others else ""
            click.echo(f"note: {word_as(word, read_as)} read as {what} ({chosen['why']}{also}); "
                       f"give {'--kind' if read_as == 'idesc' else '--as'} to choose", err=True)
    if runtime is not None and not out.json:
        click.echo(f"note: {runtime['word']} {runtime['note']}", err=True)
    if out.json:
        out.emit_json(result=report.as_dict(), **({"runtime": runtime} if runtime else {}),
                      **({"identified": chosen} if chosen else {}))
    elif out.table:
        renderer().validated(report, read_as, ctx, verbose=verbose)
    else:
        out.lines(plain_finding(f) for f in report.findings)
        if verbose:
            out.lines(plain_not_checked(n) for n in report.not_checked)
    _finish(report, exit_zero)


# --------------------------------------------------------------------------------------------
# check

#: Context the shared memory rules use that check takes per operand.
_ELSEWHERE = {"pattern_start": "per operand: --a-pattern-start / --b-pattern-start"}


@click.command(short_help="Check one tcgen05.mma instruction: its descriptor words together.")
@click.option("--idesc", "idesc_word", required=True, type=WORD, metavar="WORD",
              help="The 32-bit instruction descriptor, or CUTLASS's 64-bit runtime form (its upper half, E31).")
@click.option("--kind", required=True, type=KindType(), help="The MMA kind (kind::f16 and .kind::f16 accepted).")
@click.option("--adesc", "a_word", type=WORD, metavar="WORD", help="A's shared memory descriptor (or --a-tmem).")
@click.option("--bdesc", "b_word", required=True, type=WORD, metavar="WORD", help="B's shared memory descriptor.")
@click.option("--zcm", "zcm_word", type=WORD, metavar="WORD",
              help="The zero-column mask descriptor (tcgen05.mma.ws only); M and N come from the idesc.")
@click.option("--a-pattern-start", type=UINT, metavar="BYTES",
              help="Where A's swizzle pattern starts (Table 41 base offset check).")
@click.option("--b-pattern-start", type=UINT, metavar="BYTES",
              help="Where B's swizzle pattern starts (Table 41 base offset check).")
@context_options(*APPLIES["mma"])
@verbose_options
@output_options
def check(out: Output, idesc_word: int, kind: descgen.Kind, a_word: int | None, b_word: int, zcm_word: int | None,
          a_pattern_start: int | None, b_pattern_start: int | None, context: dict[str, Any], verbose: bool,
          exit_zero: bool) -> None:
    """Check one tcgen05.mma instruction as a whole: each word's own rules plus the rules that
    tie them together (Table 52 swizzle vs the idesc's types and major-ness, absolute LBO mode
    only K-major, an ignored LBO, the zero-column mask limits for the idesc's M).

    A comes from shared memory (--adesc WORD) or tensor memory (--a-tmem): exactly one.
    Findings on the shared memory and zcm words name their field a_desc.FIELD, b_desc.FIELD,
    zcm.FIELD; output and exit status are those of descgen validate, findings grouped by word.

    \b
      descgen check --idesc 0x08200010 --adesc 0x4000404000010040 \\
                    --bdesc 0x4000404000010440 --kind f16 --arch sm_100a
    """
    if a_word is not None and context["a_tmem"]:
        raise click.UsageError("--adesc and --a-tmem exclude each other: A is read from shared memory "
                               "(--adesc WORD) or from tensor memory (--a-tmem), not both")
    if a_word is None and not context["a_tmem"]:
        raise click.UsageError("where is A? give --adesc WORD (A in shared memory) or --a-tmem (A in tensor memory)")
    out.input = {
        "idesc": hex_word(idesc_word, 32 if idesc_word < 1 << 32 else 64),
        "adesc": None if a_word is None else hex_word(a_word, 64),
        "bdesc": hex_word(b_word, 64),
        "zcm": None if zcm_word is None else hex_word(zcm_word, 64),
        "kind": kind,
        "a_pattern_start": a_pattern_start,
        "b_pattern_start": b_pattern_start,
        **context,
    }
    runtime = None
    if idesc_word >> 32:  # CUTLASS's 64-bit runtime form, as decode and validate read it (E31)
        split = descgen.idesc_from_runtime(idesc_word)
        runtime, idesc_word = split.as_dict(), split.idesc
        if not out.json:
            click.echo(f"note: {runtime['word']} {runtime['note']}", err=True)
    report = descgen.check_mma(idesc=idesc_word, kind=kind, a_desc=a_word, b_desc=b_word, zcm=zcm_word,
                               a_pattern_start=a_pattern_start, b_pattern_start=b_pattern_start, **context)
    roles = [r for r in ROLES if r in report.decoded or (r == "a_desc" and a_word is None)]
    groups: dict[str, list[Any]] = {r: [f for f in report.findings if role_of(f) == r] for r in roles}
    if out.json:
        out.emit_json(result=report.as_dict(), **({"runtime": runtime} if runtime else {}))
    elif out.table:
        renderer().checked(report, f"tcgen05.mma .kind::{kind}", context, groups, verbose=verbose, elsewhere=_ELSEWHERE)
    else:
        out.lines(plain_finding(f) for r in roles for f in groups[r])
        if verbose:
            out.lines(plain_not_checked(n) for n in report.not_checked)
    _finish(report, exit_zero)


@click.command("check-wgmma", short_help="Check one Hopper wgmma.mma_async instruction (sm_90a).")
@click.option("--shape", required=True, metavar="m64nNkK", help="The shape qualifier, e.g. m64n128k16 (§9.7.15.2).")
@click.option("--dtype", required=True, type=TypeChoice("wgmma_dtypes"),
              help="The accumulator type .dtype (§9.7.15.3).")
@click.option("--atype", required=True, type=TypeChoice("wgmma_types"), help="A's type .atype (§9.7.15.3).")
@click.option("--btype", type=TypeChoice("wgmma_types"), help="B's type .btype (default: --atype).")
@click.option("--adesc", "a_word", type=WORD, metavar="WORD", help="A's 64-bit descriptor (omit: A from registers).")
@click.option("--bdesc", "b_word", required=True, type=WORD, metavar="WORD", help="B's 64-bit descriptor.")
@click.option("--sp", is_flag=True, help="wgmma.mma_async.sp (A structured-sparse).")
@click.option("--sp-sel", type=int, metavar="N", help="The sp-sel immediate (with --sp).")
@click.option("--trans-a", type=int, metavar="0|1", help="imm-trans-a (1: A transposed, M-major).")
@click.option("--trans-b", type=int, metavar="0|1", help="imm-trans-b (1: B transposed, N-major).")
@click.option("--scale-a", type=int, metavar="1|-1", help="imm-scale-a (-1 negates A).")
@click.option("--scale-b", type=int, metavar="1|-1", help="imm-scale-b (-1 negates B).")
@click.option("--scale-d", type=int, metavar="0|1", help="scale-d as an immediate (omit: a predicate).")
@click.option("--satfinite", is_flag=True, help=".satfinite (integer forms).")
@click.option("--a-pattern-start", type=UINT, metavar="BYTES",
              help="Where A's swizzle pattern starts (base offset check).")
@click.option("--b-pattern-start", type=UINT, metavar="BYTES",
              help="Where B's swizzle pattern starts (base offset check).")
@verbose_options
@output_options
def check_wgmma(out: Output, shape: str, dtype: str, atype: str, btype: str | None, a_word: int | None, b_word: int,
                sp: bool, sp_sel: int | None, trans_a: int | None, trans_b: int | None, scale_a: int | None,
                scale_b: int | None, scale_d: int | None, satfinite: bool, a_pattern_start: int | None,
                b_pattern_start: int | None, verbose: bool, exit_zero: bool) -> None:
    """Check one Hopper wgmma.mma_async{.sp} instruction (sm_90a, PTX ISA 9.1 §9.7.15) as a whole:
    each descriptor's own rules plus the instruction's: the shape for the types (§9.7.15.2), the
    type combination (§9.7.15.3), the immediates (transpose only for f16/bf16 through a
    descriptor, negation only for floating types, sp-sel), an ignored LBO.

    The qualifiers and immediates are the instruction's as written; an immediate left out is
    an operand the form does not have (or, for --scale-d, a predicate). Findings on a descriptor
    name their field a_desc.FIELD, b_desc.FIELD; output and exit status are those of check.

    \b
      descgen check-wgmma --shape m64n128k16 --dtype f32 --atype f16 \\
                          --adesc 0x4000004000010040 --bdesc 0x4000004000010440 --trans-a 0 --trans-b 1
    """
    from descgen.model.wgmma_facts import parse_wgmma_shape

    mnk = parse_wgmma_shape(shape)
    if mnk is None:
        raise click.BadParameter(f"{shape!r} is not a shape m64nNkK (e.g. m64n128k16)", param_hint="--shape")
    m, n, k = mnk
    args: dict[str, Any] = dict(atype=atype, btype=btype, dtype=dtype, m=m, n=n, k=k, sp=sp, sp_sel=sp_sel,
                                trans_a=trans_a, trans_b=trans_b, scale_a=scale_a, scale_b=scale_b, scale_d=scale_d,
                                satfinite=satfinite, a_pattern_start=a_pattern_start, b_pattern_start=b_pattern_start)
    out.input = {"shape": shape, "adesc": None if a_word is None else hex_word(a_word, 64),
                 "bdesc": hex_word(b_word, 64), **{key: v for key, v in args.items() if key not in ("m", "n", "k")}}
    report = descgen.check_wgmma(a_desc=a_word, b_desc=b_word, **args)
    if out.json:
        out.emit_json(result=report.as_dict())
    elif out.table:
        roles = [r for r in ("a_desc", "b_desc") if r in report.decoded]  # no a_desc: A from registers
        groups: dict[str, list[Any]] = {r: [f for f in report.findings if role_of(f) == r] for r in roles}
        groups["instruction"] = [f for f in report.findings if role_of(f) not in roles]
        instruction = (f"wgmma.mma_async{'.sp' if sp else ''}.{shape.lstrip('.').lower()}"
                       f".{dtype}.{atype}.{btype or atype}"
                       + ("  (A from registers)" if a_word is None else ""))
        renderer().checked(report, instruction, None, groups, verbose=verbose)
    else:
        out.lines(plain_finding(f) for f in report.findings)
        if verbose:
            out.lines(plain_not_checked(nc) for nc in report.not_checked)
    _finish(report, exit_zero)


# --------------------------------------------------------------------------------------------
# explain


@click.command(short_help="Explain a finding code: the rule, its source, a legal and an illegal example.")
@click.argument("code")
@pager_option
@output_options
def explain(out: Output, code: str, no_pager: bool) -> None:
    """Explain CODE (case-insensitive): severity, what it applies to, the fields and context it
    reads, the rule and its PTX source.

    For every code an input can produce, a legal and an illegal example: the command (or the
    Python call, >>>) that shows each, and what it reports or raises; a code no input can
    produce says why. For a field's own check (IDESC-N-RANGE, SMEM-RESERVED-14...), also where
    the field sits and its domain. descgen rules lists every code. An erratum (E1...), as
    sources cite them ("Table 39 (E11)"): the PTX text, the conflict and descgen's decision.

    \b
      descgen explain IDESC-N-SHAPE
      descgen explain smem-reserved-14
      descgen explain E19
    """
    codes = all_codes()
    key = code.strip().upper()
    out.input = {"code": key}
    from descgen.core.errata import ERRATUM_CODE, errata

    if ERRATUM_CODE.fullmatch(key):  # a spec erratum, as sources cite them: Table 39 (E11)
        found = errata().get(key)
        if found is None:
            raise click.UsageError(f"unknown erratum {code.strip()!r}; the errata are E1-E{len(errata())}")
        with paged(not no_pager):
            if out.json:
                out.emit_json(result=found.as_dict())
            else:
                click.echo(f"{found.code}: {found.title}\n\n{found.text}")
        return
    if key not in codes:
        import difflib

        close = difflib.get_close_matches(key, list(codes), n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; descgen rules lists every code"
        raise click.UsageError(f"unknown code {code.strip()!r}{hint}")
    info = explain_info(key)
    with paged(not no_pager):
        if out.json:
            out.emit_json(result=info)
        elif out.table:
            renderer().explained(info)
        else:
            out.lines(_plain_explain(info))


def _origins() -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every code by where it comes from: the catalog (tables/rules.toml), the fields' own checks
    (generated from the layout tables), the tile model's codes ([[layout]] of tables/codes.toml),
    the usage errors (a call that is wrong in itself)."""
    return (("catalog", catalog()), ("field", field_codes()), ("layout", layout_table()), ("usage", usage_codes()))


def explain_info(code: str) -> dict[str, Any]:
    """Everything ``descgen explain`` shows, JSON-ready."""
    rule = all_codes()[code]
    origin = next((name for name, table in _origins() if code in table), "usage")
    info: dict[str, Any] = {**rule.as_dict(), "origin": origin}
    pair = examples_for(code)
    if pair is not None:
        info["examples"] = {}
        for which, spec in zip(("legal", "illegal"), pair):
            ex = example(spec)
            got = ex.outcome()
            info["examples"][which] = {
                "command": ex.command(),
                "language": ex.language,  # shell: a command line; python: an expression (import descgen)
                "ok": got.ok,
                "shows": code in got.codes,
                "raised": got.raised,  # the error class the call raised, "" when it returned
                "findings": [f.as_dict() for f in got.findings],
            }
    elif code in unreachable():
        info["unreachable"] = unreachable()[code]
    if origin == "field":
        info["layouts"] = _field_places(code)
    return info


def _field_places(code: str) -> list[dict[str, Any]]:
    """Where a generated field code comes from: per layout, the field's bits and its domain
    (per kind, kinds with the same domain together)."""
    from descgen.model.engine import finding_code
    from descgen.model.loader import layouts

    check = code.rsplit("-", 1)[-1]
    out = []
    for lay in layouts():
        for f in lay.fields:
            if finding_code(lay.word, f, check) != code:
                continue
            by_text: dict[str, list[str]] = {}
            for kind in lay.kinds or (None,):
                by_text.setdefault(f.domain(kind).describe(), []).append(kind or "")
            domains = {", ".join(k for k in kinds if k): text for text, kinds in by_text.items()}
            if len(domains) == 1:
                domains = {"": next(iter(domains.values()))}
            out.append({"layout": lay.name, "source": lay.source.replace("PTX ISA 9.1 ", ""), "field": f.name,
                        "bits": f.bits, "domains": domains})
    return out


def _plain_explain(info: dict[str, Any]) -> list[str]:
    lines = [f"code={info['code']}", f"severity={info['severity']}", f"applies={info['applies']}",
             f"origin={info['origin']}", f"fields={','.join(info['fields'])}"]
    if info["origin"] == "catalog":
        lines += [f"kinds={','.join(info.get('kinds') or ())}", f"needs={','.join(info['needs'])}",
                  f"uses={','.join(info['uses'])}"]
    lines += [f"rule={info['rule']}", f"source={info['source']}"]
    for where in info.get("layouts", ()):
        domains = "; ".join(f"{k}: {v}" if k else v for k, v in where["domains"].items())
        lines.append(f"where={where['layout']} bits {where['bits']}: {domains}")
    for which, ex in info.get("examples", {}).items():
        found = ", ".join(f"{f['severity']} {f['code']}" for f in ex["findings"]) or "clean"
        lines += [f"{which}={ex['command']}",
                  f"{which}.reports=" + (f"raises {ex['raised']}: " if ex["raised"] else "") + found]
    if "unreachable" in info:
        lines.append(f"unreachable={info['unreachable']}")
    return lines


# --------------------------------------------------------------------------------------------
# rules


@click.command(short_help="List every finding code descgen can report.")
@click.option("--applies", type=LazyChoice(lambda: tuple(dict.fromkeys((*APPLIES_TO, *USAGE_APPLIES)))),
              help="Only the codes of one word (mma: the rules between the words of one instruction; "
                   "ptx: the PTX scanner's own rules; layout: the shared-memory tile model (descgen layout, "
                   "smem --tile); emit: descgen.emit's usage errors; batch: bad batch requests; context: bad context "
                   "values; tables: a malformed tables/ file).")
@click.option("--markdown", is_flag=True, help="Print the rules page (docs/rules.md) as Markdown, verbatim.")
@pager_option
@output_options
def rules(out: Output, applies: str | None, markdown: bool, no_pager: bool) -> None:
    """List every code: the catalog's rules (between fields, words and the instruction), each
    field's own checks, the tile model's codes (descgen layout, smem --tile), then the usage errors (a call wrong in
    itself: raised, never found in a
    word), with severity, what it applies to, the context it needs, the rule and its source.

    \b
    Piped (--plain): one line per code:
      CODE SEVERITY APPLIES needs=NAME,...: rule [source]
    descgen explain CODE shows one code with examples.
    """
    params = click.get_current_context().params
    if markdown and (params.get("as_json") or params.get("table") or params.get("plain")):
        raise click.UsageError("--markdown prints the rules page; it does not combine with --json, --table or --plain")
    if markdown and applies:
        raise click.UsageError("--markdown prints the whole rules page; it does not combine with --applies")
    out.input = {"applies": applies, "markdown": markdown}
    with paged(not no_pager):
        if markdown:
            click.echo(rules_markdown(), nl=False)
            return
        rows = [{**r.as_dict(), "origin": origin} for origin, table in _origins()
                for r in table.values() if applies is None or r.applies == applies]
        if out.json:
            out.emit_json(result={"rules": rows})
        elif out.table:
            renderer().rules_table(rows)
        else:
            out.lines(f"{r['code']} {r['severity']} {r['applies']} needs={','.join(r['needs'])}: {r['rule']} "
                      f"[{r['source']}]" for r in rows)

