"""The packages.pip lines of an adopted profile, one per distribution and marker: a second line of the same name is
merged into the first where pip would install both (``black`` then ``black[jupyter]``: ``black[jupyter]``; a bare
name beside a pinned one: the pin with both lines' extras), and otherwise noted as not taken."""

from __future__ import annotations

from envgen.profile.requirements import PipLine, parse_line

Comments = dict[tuple[object, ...], str]


def _merged(first: PipLine, second: PipLine) -> str | None:
    """One line that asks what both ask, or None where their version clauses differ."""
    if first.specifier and second.specifier and first.specifier != second.specifier:
        return None
    extras = sorted({*first.extras, *second.extras})
    spec = first.specifier or second.specifier
    marker = f"; {first.marker}" if first.marker else ""
    return f"{first.raw_name}{'[' + ','.join(extras) + ']' if extras else ''}{spec}{marker}"


class PipLines:
    def __init__(self, notes: list[str], comments: Comments) -> None:
        self.notes, self.comments = notes, comments
        self.lines: list[str] = []
        self._seen: dict[tuple[str, str | None], tuple[int, str]] = {}

    def add(self, text: str, origin: str) -> None:
        line = parse_line(text)
        key = (line.name, line.marker)
        if key not in self._seen:
            self._seen[key] = (len(self.lines), origin)
            self.comments[("packages", "pip", len(self.lines))] = origin
            self.lines.append(text)
            return
        index, first_origin = self._seen[key]
        merged = _merged(parse_line(self.lines[index]), line)
        if merged is None:
            self.notes.append(f"{origin}: {text!r} not taken: {line.name} is listed already ({first_origin}) "
                                   "with other versions")
            return
        if merged != self.lines[index]:
            self.notes.append(f"{origin}: {text!r} merged with {self.lines[index]!r} ({first_origin}) into "
                                   f"{merged!r}")
            self.lines[index] = merged
            self.comments[("packages", "pip", index)] = f"{first_origin}; {origin}"
