"""Lines of the values of a YAML contract, by JSON path (for error messages).

PyYAML (the yaml extra) composes the document into nodes that know where they start; this walks
them like `jsonpos.locate` walks JSON text. Best effort: an unparsable document gives no lines.
"""
from __future__ import annotations

from typing import Any

__all__ = ("locate_yaml",)


def locate_yaml(text: str) -> dict[str, tuple[int, int]]:
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    found: dict[str, tuple[int, int]] = {}

    def walk(node: Any, path: str) -> None:
        found.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, f"{path}.{key.value}")
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, f"{path}[{index}]")

    if root is not None:
        walk(root, "$")
    return found
