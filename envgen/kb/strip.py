"""Rows of ``strip_symbols.yaml``: the ELF symbol tables a runtime image may drop from the shared objects and programs
of its Python environment (``.symtab``/``.strtab`` and ``.debug_*``: the dynamic loader and dlopen read ``.dynsym``
and ``.dynamic`` only), the tool and flags that do it (Debian's, for every package it ships), and whose files may be
rewritten at all: the licences that allow a modified copy (each with whether modified files must carry a notice)
and the distributions whose licence forbids it (NVIDIA's CUDA wheels). Read by ``plan.slim``; written by hand from
the sources each row names."""

from __future__ import annotations

from typing import ClassVar

from envgen.kb.models import Row


class StripTool(Row):
    """The strip program (a package of the base's own archive) and its flags per kind of ELF file."""

    FILE: ClassVar[str] = "strip_symbols.yaml"

    name: str
    package: str  # what apt installs in the strip stage (never in the image)
    flags: list[str]  # strip's flags, for shared objects and programs alike (Debian Policy 10.1, 10.2)
    sections: list[str]  # a file is rewritten only where it holds one of these (a trailing * is a prefix)
    why: str

    @property
    def key(self) -> str:
        return self.name


class StripLicence(Row):
    """A licence that allows distributing a modified copy of a binary: the spellings a wheel's METADATA gives it (an
    SPDX identifier in License-Expression, the License field's text, a trove classifier)."""

    FILE: ClassVar[str] = "strip_symbols.yaml"

    name: str
    spellings: list[str]
    notice: bool = False  # the licence asks modified files to carry a notice (share/envgen/stripped.txt)
    why: str

    @property
    def key(self) -> str:
        return self.name


class StripRefused(Row):
    """Distributions whose own licence forbids modifying their files: never stripped, whatever METADATA says."""

    FILE: ClassVar[str] = "strip_symbols.yaml"

    name: str
    distributions: list[str]  # fnmatch patterns on the normalised distribution name (nvidia-*)
    why: str

    @property
    def key(self) -> str:
        return self.name
