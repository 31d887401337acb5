"""Pictures of descriptors as SVG documents (text; nothing here prints or writes a file): the
layout a shared memory descriptor makes the tensor core read (:func:`smem_layout_svg`, from
:func:`descgen.smem_layout`) and an instruction descriptor's M x N x K with its operands'
major-ness (:func:`idesc_shape_svg`, from :func:`descgen.decode_idesc`). The command line writes
them with ``--svg FILE`` (``descgen layout``, ``descgen idesc``).

The modules: :mod:`~descgen.pictures.svg` (the SVG element writer, colours, the findings block
both pictures show), :mod:`~descgen.pictures.smem_layout` and :mod:`~descgen.pictures.idesc_shape`
(one picture each). Standard library only.
"""

from __future__ import annotations

from .idesc_shape import idesc_shape_svg
from .smem_layout import smem_layout_svg

__all__ = ["smem_layout_svg", "idesc_shape_svg"]
