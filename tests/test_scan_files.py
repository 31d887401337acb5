"""Scanning many files (descgen.ptx.files.scan_files, ``descgen scan --jobs``): forked workers give
what one process gives, in the same order, with the same read errors and not-PTX warnings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from descgen.ptx.files import PARALLEL_BYTES, auto_jobs, scan_files
from descgen.workers import MAX_AUTO_JOBS, can_fork, cores

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
        proc = subprocess.Popen([sys.executable, "-m", "descgen.cli", "scan", *paths, "-j", "2"], stdout=subprocess.DEVNULL,
                                stderr=err, text=True, start_new_session=True)
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
    from descgen.errors import UsageError

    for jobs in (1, 2):
        with pytest.raises(UsageError) as e:
            next(scan_files(SAMPLE, arch="sm_999", jobs=jobs))  # type: ignore[arg-type]
        assert e.value.code == "CONTEXT-ARCH"


def test_descgen_errors_cross_a_process_boundary_whole() -> None:
    """A worker's error is pickled back to the parent: every error class keeps its findings and
    message (an error that could not be unpickled would stop the pool's result thread)."""
    import pickle

    import descgen
    from descgen.errors import DescgenError, TableError

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
