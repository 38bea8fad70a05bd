"""A small reading of an HTML page for the tests: its element tree (with the nesting checked),
each element's attributes and text, the way a browser without scripts would see them."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """The text inside, as it reads (entities decoded), without the script and style."""
        parts: list[str] = []
        for child in self.children:
            if isinstance(child, str):
                parts.append(child)
            elif child.tag not in ("script", "style"):
                parts.append(child.text())
        return "".join(parts)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        """Every element below (this one included) with the tag and class asked for."""
        return [node for node in self.walk() if (tag is None or node.tag == tag)
                and (cls is None or cls in (node.attrs.get("class") or "").split())]

    def by_id(self, wanted: str) -> Node:
        found = [node for node in self.walk() if node.attrs.get("id") == wanted]
        assert len(found) == 1, f"{len(found)} elements with id {wanted!r}"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = [name for name, _ in attrs]
        if len(names) != len(set(names)):
            self.problems.append(f"<{tag}> repeats an attribute: {names}")
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.stack[-1].tag != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1].tag}>")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def dangling(root: Node) -> list[str]:
    """The in-page links (`#id`) that point at no element of the page."""
    ids = {node.attrs.get("id") for node in root.walk()}
    return [href for node in root.walk() if (href := node.attrs.get("href")) and href[1:] not in ids]


def parse(page: str) -> Node:
    """The page's tree; fails the test if an element is closed out of order or left open."""
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert not builder.problems, builder.problems[:5]
    assert [node.tag for node in builder.stack] == ["#document"], "elements left open"
    return builder.root
