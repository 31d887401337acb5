"""Scanning many files (descgen.ptx.files.scan_files, ``descgen scan --jobs``): forked workers give
what one process gives, in the same order, with the same read errors and not-PTX reports; input
that is not PTX is reported one way, whatever it is."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from descgen.ptx.files import auto_jobs, scan_files
from descgen.core.workers import PARALLEL_BYTES
from descgen.core.workers import MAX_AUTO_JOBS, can_fork, cores

from conftest import REPO
from test_cli_terminal import run

CORPUS = Path(REPO) / "tests" / "corpus"
#: One file of each compiler's directory, and a repro: small enough for a quick test, every reader.
SAMPLE = [str(sorted(d.glob("*.ptx"))[0]) for d in sorted(CORPUS.iterdir()) if d.is_dir() and any(d.glob("*.ptx"))]

needs_fork = pytest.mark.skipif(not can_fork(), reason="workers are forked")


def answers(paths: list[str], jobs: int) -> list[tuple]:
    out = []
    for f in scan_files(paths, jobs=jobs):
        chunks = list(f.chunks)
        ins = [(i.line, i.opcode, tuple((o.role, o.text, o.value, o.known, o.range) for o in i.operands))
               for c in chunks for i in c.instructions]
        found = [(x.line, x.code, x.message()) for c in chunks for x in c.findings]
        out.append((f.name, f.error, f.not_ptx, f.arch, f.arch_from, f.version, ins, found))
    return out


@needs_fork
def test_workers_answer_what_one_process_answers_in_the_same_order(tmp_path: Path) -> None:
    empty = tmp_path / "empty.ptx"
    empty.write_text("")
    paths = SAMPLE + [str(empty), str(tmp_path / "missing.ptx")] + SAMPLE[:2]
    one, two = answers(paths, 1), answers(paths, 2)
    assert one == two
    assert [a[0] for a in two] == paths  # in the order given
    assert sum(len(a[6]) for a in one) > 20  # real instructions compared
    assert one[len(SAMPLE)][2] == "the file is empty" and one[len(SAMPLE) + 1][1]  # not PTX; cannot be read


@needs_fork
def test_descgen_scan_prints_the_same_with_workers() -> None:
    args = ["scan", *SAMPLE, "--exit-zero"]
    one, two = run(*args, "-j", "1"), run(*args, "-j", "2")
    assert one.stdout == two.stdout and one.stderr == two.stderr
    assert one.stderr.count("instructions;") == len(SAMPLE) + 1  # a line per file and the total
    j1, j2 = run(*args, "--json", "-j", "1").stdout.splitlines(), run(*args, "--json", "-j", "2").stdout.splitlines()
    assert len(j1) == len(j2) > len(SAMPLE)
    strip = lambda line: line.split('"run_time"')[0]  # noqa: E731 (the run-time lists may order ties apart)
    assert [strip(x) for x in j1] == [strip(x) for x in j2]


@pytest.mark.parametrize("bad", ["0", "-1", "many"])
def test_jobs_must_be_a_positive_count_or_auto(bad: str) -> None:
    result = run("scan", SAMPLE[0], "-j", bad, code=2)
    assert "is not a positive integer or 'auto'" in result.stderr


def test_auto_uses_the_cores_only_for_several_files_of_a_megabyte(tmp_path: Path) -> None:
    assert auto_jobs([SAMPLE[0]]) == 1
    assert auto_jobs([SAMPLE[0], "-"]) == 1
    tiny = [tmp_path / f"{n}.ptx" for n in range(3)]
    for p in tiny:
        p.write_text(".version 8.7\n")
    assert auto_jobs([str(p) for p in tiny]) == 1  # far below a megabyte
    big = [tmp_path / f"big{n}.ptx" for n in range(3)]
    for p in big:
        p.write_text(".version 8.7\n" + "// padding\n" * (PARALLEL_BYTES // 30))
    expected = min(cores(), MAX_AUTO_JOBS, 3) if can_fork() else 1
    assert auto_jobs([str(p) for p in big]) == expected


@needs_fork
def test_ctrl_c_with_workers_exits_130_after_the_files_written(tmp_path: Path) -> None:
    """Ctrl-C (to the process group, as a terminal sends it) while workers scan: exit 130, no
    traceback from the parent or a worker, the files reported so far whole and in order."""
    import signal
    import subprocess
    import sys
    import time

    paths = [str(CORPUS)] * 6  # the corpus six times: long enough to interrupt
    err_path = tmp_path / "err.txt"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "descgen.cli", "scan", *paths, "-j", "2"],
                                stdout=subprocess.DEVNULL, stderr=err, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and err_path.read_text().count("\n") < 5:
            time.sleep(0.05)
        assert proc.poll() is None, "finished before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    text = err_path.read_text()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "Aborted!" not in text
    done = [line.split(":")[0] for line in text.splitlines() if "instructions;" in line]
    first_files = sorted(str(p) for p in CORPUS.glob("*/*.ptx"))
    assert 5 <= len(done) < 6 * len(first_files) and done == (first_files * 6)[:len(done)]


def test_an_unknown_target_is_refused_before_any_file_is_read() -> None:
    from descgen.core.errors import UsageError

    for jobs in (1, 2):
        with pytest.raises(UsageError) as e:
            next(scan_files(SAMPLE, arch="sm_999", jobs=jobs))  # type: ignore[arg-type]
        assert e.value.code == "CONTEXT-ARCH"


def test_descgen_errors_cross_a_process_boundary_whole() -> None:
    """A worker's error is pickled back to the parent: every error class keeps its findings and
    message (an error that could not be unpickled would stop the pool's result thread)."""
    import pickle

    import descgen
    from descgen.core.errors import DescgenError, TableError

    raised: list[DescgenError] = [TableError("tables/x.toml", "field n", "bad")]
    for call in (lambda: descgen.encode_idesc("f16", 100, 256), lambda: descgen.decode_idesc(1 << 40, "f16"),
                 lambda: descgen.encode_idesc("nokind", 128, 256)):  # type: ignore[arg-type]
        with pytest.raises(DescgenError) as e:
            call()
        raised.append(e.value)
    assert {type(e).__name__ for e in raised} == {"TableError", "EncodeError", "WordError", "UsageError"}
    for err in raised:
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and back.findings == err.findings


# --------------------------------------------------------------------------------------------
# Input that is not PTX: one report for every kind (a text file, an empty .ptx, random bytes),
# from a file or from standard input, plain and --json, with one exit status.

NOT_PTX = {
    "notes.txt": (b"Build notes: run make, then copy the cubin.\n",
                  "no .version directive and no tcgen05 or wgmma instruction"),
    "empty.ptx": (b"", "the file is empty"),
    # random bytes without a NUL byte (one would make it binary outright): most are not UTF-8
    "random.ptx": (bytes(random.Random(28).choices(range(1, 256), k=400)), "the file is binary"),
}


def _not_ptx_files(tmp_path: Path) -> dict[str, tuple[Path, bytes, str]]:
    out = {}
    for name, (content, why) in NOT_PTX.items():
        path = tmp_path / name
        path.write_bytes(content)
        out[name] = (path, content, why)
    return out


def test_not_ptx_is_reported_one_way_plain(tmp_path: Path) -> None:
    import json

    files = _not_ptx_files(tmp_path)
    for path, content, why in files.values():
        for args, stdin, name in (([str(path)], None, str(path)), (["-"], content, "<stdin>")):
            from test_cli import _runner
            from descgen.cli import cli

            r = _runner().invoke(cli, ["scan", *args], input=stdin)
            assert r.exit_code == 2, (name, r.stderr)
            assert r.stdout == ""
            assert r.stderr == f"{name}: error: not PTX ({why}); not scanned\n"
            r = _runner().invoke(cli, ["scan", *args, "--json"], input=stdin)
            assert r.exit_code == 2
            docs = [json.loads(line) for line in r.stdout.splitlines()]
            assert [d["type"] for d in docs] == ["run", "file", "summary"]
            assert docs[1] == {"type": "file", "file": name, "status": "not-ptx", "reason": why}
            assert docs[2]["files"] == 0 and docs[2]["not_ptx"] == 1 and docs[2]["ok"] is False


def test_not_ptx_beside_ptx_files_and_a_missing_one(tmp_path: Path) -> None:
    import json

    files = _not_ptx_files(tmp_path)
    clean = str(Path(REPO) / "tests" / "ptx" / "clean.ptx")
    paths = [clean] + [str(p) for p, _, _ in files.values()] + [str(tmp_path / "missing.ptx")]
    r = run("scan", *paths, code=2)
    err = r.stderr.splitlines()
    assert err[0].startswith(f"{clean}: 23 instructions")
    assert err[1:4] == [f"{p}: error: not PTX ({why}); not scanned" for p, _, why in files.values()]
    assert err[4] == f"Error: cannot read {tmp_path / 'missing.ptx'}: No such file or directory"
    assert err[5].startswith("1 file, 3 not PTX: 23 instructions")
    docs = [json.loads(line) for line in run("scan", *paths, "--json", code=2).stdout.splitlines()]
    records = [d for d in docs if d["type"] == "file"]
    assert [(d["file"], d["status"], d.get("reason")) for d in records] == \
        [(clean, "scanned", None)] + [(str(p), "not-ptx", why) for p, _, why in files.values()] + \
        [(str(tmp_path / "missing.ptx"), "unreadable", "No such file or directory")]
    assert docs[-1]["files"] == 1 and docs[-1]["not_ptx"] == 3 and docs[-1]["unreadable"] == 1
    # the library says the same: one status and one reason per path
    got = [(f.status, f.reason) for f in scan_files(paths)]
    assert got == [("scanned", None)] + [("not-ptx", why) for _, _, why in files.values()] + \
        [("unreadable", "No such file or directory")]


def test_a_fragment_with_an_instruction_is_still_scanned() -> None:
    """Text without .version that holds a tcgen05 instruction (the catalog's examples, a pasted
    snippet) is a fragment, scanned as before."""
    from test_cli import _runner
    from descgen.cli import cli

    snippet = "mov.b32 %r1, 0x04200010; tcgen05.mma.cta_group::1.kind::f16.ashift [%r0], [%r4], %rd2, %r1, 1;\n"
    r = _runner().invoke(cli, ["scan", "-", "--arch", "sm_100a"], input=snippet)
    assert r.exit_code == 1 and "PTX-ASHIFT-M" in r.stdout and "not PTX" not in r.stderr


def test_scan_help_says_json_lines_not_an_envelope() -> None:
    text = " ".join(run("scan", "--help").stdout.split())
    assert "envelope." not in text.replace("not one envelope.", "")
    assert "--json Print JSON lines as the scan goes (one object per line, described above), not one envelope." in text
    assert "--json: not one envelope but JSON lines" in text
    assert 'FILE: error: not PTX (why); not scanned' in text
    # every other command's --json is the envelope
    assert "--json Print a versioned JSON envelope." in " ".join(run("decode", "--help").stdout.split())
