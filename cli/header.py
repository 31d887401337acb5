"""``descgen header [--lang cpp] [-o FILE]``: the C++/CUDA header generated from the tables.

Registered on the group of :mod:`descgen.cli.app`; a thin renderer of
:func:`descgen.backends.cpp_header.header` (what it holds: README, "The C++/CUDA header").
"""

from __future__ import annotations

import click

from descgen.backends import cpp_header

__all__ = ["header"]


@click.command(short_help="Write the C++/CUDA header of the tcgen05 words (descgen_tcgen05.hpp).")
@click.option("--lang", type=click.Choice(["cpp"]), default="cpp", show_default=True,
              help="The language: cpp (C++17 or later, and CUDA; only <cstdint>; __host__ __device__ under nvcc).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help=f"Write to FILE (e.g. {cpp_header.FILE_NAME}) instead of stdout.")
def header(lang: str, output: str | None) -> None:
    """Write a self-contained, header-only C++/CUDA header for the instruction descriptor (its
    three layouts), the shared memory and zero-column mask descriptors and the tensor memory
    address: fields, constexpr encoders (encode_idesc, encode_smem, encode_zcm, encode_taddr),
    decoders, validators with the Python API's finding codes (validate_*, check_mma), the code ->
    rule table and DESCGEN_CHECK. Every legal set in it is data from tables/."""
    text = cpp_header.header()
    if output is None:
        click.echo(text, nl=False)
        return
    with open(output, "w", encoding="ascii") as fh:
        fh.write(text)
