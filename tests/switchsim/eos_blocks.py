"""Configuration lines an EOS switch keeps as given: the verbatim half of its config.

The simulator models the commands plumb reads and writes (`eos_model`); every
other command a real switch accepts (``speed 200g-4``, ``load-interval 2``,
``qos trust dscp``, ``management api http-commands`` with its sub-mode,
``neighbor X send-community``, ``vlan-aware-bundle`` blocks, ``!!`` comments ...)
is kept as a `Block`: the line exactly as configured and the lines of its
sub-mode, in the order they came.  `show running-config` prints them back
unchanged, so a configuration booted from a real switch's text keeps every
line, and a change to one modeled setting leaves them all as they were.

`block_tree` reads ``show running-config`` text by indentation (three spaces
per level, as EOS prints it); ``!`` separator lines and ``end`` carry no
configuration, while ``!!`` comment lines are configuration and are kept.  A
``banner login|motd`` is followed by its text, unindented, up to a line ``EOF``,
and a ``comment`` (any mode) by its text at its own indentation up to ``EOF``:
those lines are its own, kept and printed back where they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

INDENT = "   "


@dataclass
class Block:
    """One configuration line and the lines of the sub-mode it opens."""

    line: str
    children: list[Block] = field(default_factory=list)

    def clone(self) -> Block:
        """An independent copy."""
        return Block(self.line, [child.clone() for child in self.children])

    def render(self, depth: int) -> list[str]:
        """The block as ``show running-config`` prints it at `depth`."""
        lines = [INDENT * depth + self.line]
        if is_banner(self.line):
            return lines + [child.line for child in self.children]
        if self.line == "comment":
            return lines + [INDENT * depth + child.line for child in self.children]
        return lines + render_all(self.children, depth + 1)


def is_banner(line: str) -> bool:
    """A banner command, whose text follows unindented up to ``EOF``."""
    return line.startswith("banner ")


def is_separator(stripped: str) -> bool:
    """Lines that only structure the text: ``!`` (not a ``!!`` comment) and ``end``."""
    return stripped == "end" or (stripped.startswith("!") and not stripped.startswith("!!"))


def block_tree(text: str) -> list[Block]:
    """The configuration lines of `text` as a tree, by indentation."""
    root = Block("")
    stack: list[tuple[int, Block]] = [(-1, root)]
    text_of: Block | None = None  # a banner or comment taking its text lines
    for raw in text.splitlines():
        stripped = raw.strip()
        if text_of is not None:
            text_of.children.append(Block(raw if is_banner(text_of.line) else stripped))
            text_of = None if stripped == "EOF" else text_of
            continue
        if not stripped or is_separator(stripped):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        block = Block(stripped)
        stack[-1][1].children.append(block)
        stack.append((indent, block))
        if (indent == 0 and is_banner(stripped)) or stripped == "comment":
            text_of = block
    return root.children


def clone_all(blocks: Iterable[Block]) -> list[Block]:
    """Independent copies of `blocks`."""
    return [block.clone() for block in blocks]


def render_all(blocks: Iterable[Block], depth: int) -> list[str]:
    """Every block at `depth`, a ``!`` line before each one that opens a sub-mode."""
    lines: list[str] = []
    for block in blocks:
        if block.children:
            lines.append(INDENT * depth + "!")
        lines += block.render(depth)
    return lines


def add_line(blocks: list[Block], line: str) -> Block:
    """Configure `line` in a mode's unmodeled lines: kept once, and a ``no`` form it
    turns back on (``no shutdown`` when ``shutdown`` is entered) goes."""
    for block in blocks:
        if block.line == line:
            return block
    blocks[:] = [b for b in blocks if not _negates(b.line, line)]
    block = Block(line)
    blocks.append(block)
    return block


def negate(blocks: list[Block], words: str, keep_no: bool) -> None:
    """``no WORDS`` (`keep_no`) or ``default WORDS``: remove every line WORDS starts
    (``no load-interval`` undoes ``load-interval 2``) and earlier ``no`` forms of it.
    A ``no`` line that undid nothing states a non-default setting (``no shutdown``,
    ``no bgp default ipv4-unicast``) and is itself kept."""
    undone = [b for b in blocks if _starts(b.line, words)]
    blocks[:] = [b for b in blocks if b not in undone and not _starts(b.line, "no " + words)]
    if keep_no and not undone:
        blocks.append(Block("no " + words))


def _starts(line: str, words: str) -> bool:
    return line == words or line.startswith(words + " ")


def _negates(existing: str, line: str) -> bool:
    return existing.startswith("no ") and _starts(line, existing[3:])
