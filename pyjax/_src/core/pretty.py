"""A small Wadler-Lindig pretty printer (the layout engine behind jaxpr printing).

Documents are text, concatenation, breaks, nesting and groups.  A group is laid out flat when
its own content fits in the remaining width, otherwise its breaks become newlines.
"""
from __future__ import annotations

from typing import Sequence


class Doc:
    __slots__ = ()

    def __add__(self, other: "Doc") -> "Doc":
        return Concat((self, other))

    def format(self, width: int = 80) -> str:
        return _format(self, width)

    def __str__(self) -> str:
        return self.format()


class Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: Sequence[Doc]):
        self.children = tuple(children)


class Brk(Doc):
    """A space (or `text`) when flat, a newline plus indentation when broken."""

    __slots__ = ("text",)

    def __init__(self, text: str = " "):
        self.text = text


class Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n: int, child: Doc):
        self.n, self.child = n, child


class Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child


NIL = Concat(())
_FLAT, _BREAK = 0, 1


def text(s: str) -> Doc:
    return Text(s)


def concat(docs: Sequence[Doc]) -> Doc:
    return Concat(docs)


def brk(s: str = " ") -> Doc:
    return Brk(s)


def nest(n: int, doc: Doc) -> Doc:
    return Nest(n, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return Concat(out)


def _fits(doc: Doc, width: int) -> bool:
    """Does `doc` laid out flat take at most `width` columns?"""
    agenda = [doc]
    while agenda and width >= 0:
        d = agenda.pop()
        t = type(d)
        if t is Text:
            width -= len(d.text)
        elif t is Concat:
            agenda.extend(reversed(d.children))
        elif t is Brk:
            width -= len(d.text)
        else:  # Nest, Group
            agenda.append(d.child)
    return width >= 0


def _format(doc: Doc, width: int) -> str:
    out: list[str] = []
    column = 0
    agenda = [(0, _BREAK, doc)]
    while agenda:
        indent, mode, d = agenda.pop()
        t = type(d)
        if t is Text:
            out.append(d.text)
            column += len(d.text)
        elif t is Concat:
            agenda.extend((indent, mode, c) for c in reversed(d.children))
        elif t is Brk:
            if mode == _BREAK:
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(d.text)
                column += len(d.text)
        elif t is Nest:
            agenda.append((indent + d.n, mode, d.child))
        else:  # Group
            flat = mode == _FLAT or _fits(d.child, width - column)
            agenda.append((indent, _FLAT if flat else _BREAK, d.child))
    return "".join(out)
