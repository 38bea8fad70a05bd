"""The pre-commit hooks (`.pre-commit-hooks.yaml`): validate or lint every contract a commit touches.

    python -m agent_invariants.hooks validate FILE...
    python -m agent_invariants.hooks lint [--strict] FILE...

pre-commit hands over every JSON and YAML file of the commit; a file is taken for a contract when
its name is `agent-invariants.json` (`.yaml`, `.yml`, or `agent-invariants.<anything>.json`...),
ends in `.contract.json` (`.yaml`, `.yml`), or the `$schema` of its top-level object names an
agent-invariants contract schema (its URL, or a path to `contract-v1.schema.json` or
`contract-v2.schema.json`, as this repository's examples write it; an empty fragment `#` may
follow), as does a YAML file's `# yaml-language-server: $schema=...` comment line. Other files,
those that hold a contract deeper down too, are passed over, and so are rule packs (a pack names no
contract schema): a contract that `extends` a pack is checked with it when the contract is in the
commit. `validate` prints each invalid contract's problems as the command does (`agent-invariants:
contract.json:14: $.rules[2].tool: must not be empty`); `lint` also prints every finding as
`contract.json:7: error <code> [<rule ids>]: <message>`. The exit is 1 when a contract does not
validate, when lint finds an error, or (`--strict`) any finding.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from agent_invariants._safe import TEXT_LIMIT, inert, log_safe_report, said
from agent_invariants.contract_source import MAX_CONTRACT_BYTES

__all__ = ("is_contract", "main")

_NAMED = re.compile(r"(^agent-invariants(\.[^/]+)?|\.contract)\.(json|ya?ml)$")
_CONTRACT_SCHEMA = (r"""(?:[a-z][a-z0-9+.-]*://[^"'\s]*agent-invariants[^"'\s]*/"""
                    r"""|(?![a-z][a-z0-9+.-]*://)(?:[^"'\s]*/)?)contract-v[12]\.schema\.json#?""")
"""A `$schema` value that names a contract schema: a URL of agent-invariants' own, or a path to
the file (`../schemas/contract-v2.schema.json`), never another project's `contract-v1` schema."""
_NAMES_SCHEMA = re.compile(rb"contract-v[12]\.schema\.json")
"""What the text of a file that cannot be parsed must hold to be taken for a contract (and fail
the hook, saying why)."""
_SCHEMA_VALUE = re.compile(_CONTRACT_SCHEMA)
_MODELINE = re.compile(r"(?m)^#[ \t]*yaml-language-server:[ \t]*\$schema=(\S+)[ \t]*\r?$")
"""The comment by which editors' YAML support (the YAML language server) is told a file's schema,
at the start of a line (the same words inside a block scalar, which is indented, are text)."""


_USAGE = "usage: python -m agent_invariants.hooks validate|lint [--strict] FILE...\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    options = args[:args.index("--")] if "--" in args else args   # (after `--`, file names only)
    if "-h" in options or "--help" in options:
        sys.stdout.write(_USAGE)
        return 0
    if not args or args[0] not in ("validate", "lint"):
        sys.stderr.write(_USAGE)
        return 2
    command, strict = args[0], "--strict" in options
    # an option it does not know (`--stirct`) is refused rather than taken for a file it would skip:
    # a typo must not turn the hook into a silent pass
    unknown = [arg for arg in options[1:] if arg.startswith("-") and arg != "--strict" and not os.path.exists(arg)]
    if unknown:
        sys.stderr.write(said(f"hooks {command}: unknown option {inert(unknown[0], TEXT_LIMIT)}") + _USAGE)
        return 2
    failed = False
    files = [arg for arg in options[1:] if arg != "--strict"] + args[len(options) + 1:]   # (after `--`, any name)
    for path in files:
        if is_contract(path):
            failed |= _one(command, path, strict)
    return 1 if failed else 0


def is_contract(path: str) -> bool:
    """Whether a file is an agent-invariants contract, by its name or by the `$schema` of its
    top-level object (a test fixture or an MCP request may hold a contract deeper down: it is not
    one). The text is searched first, so that most files are passed over unread."""
    if _NAMED.search(Path(path).name):
        return True
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_CONTRACT_BYTES + 1)
        if len(text) > MAX_CONTRACT_BYTES or b"schema" not in text:   # (no contract is that large; a file
            return False                                              # without a $schema is passed over unread)
    except OSError:
        return False
    from agent_invariants.contract_source import ContractSource, is_yaml, parse
    from agent_invariants.errors import InputError

    try:   # (the bytes read above: the file is not read twice)
        document = parse(ContractSource(text, path, os.path.dirname(os.path.abspath(path)), is_yaml(path)))
    except InputError:   # it cannot be read: a contract if it names a contract schema (validating it says why)
        return _NAMES_SCHEMA.search(text) is not None
    schema = document.get("$schema") if isinstance(document, dict) else None
    if isinstance(schema, str) and _SCHEMA_VALUE.fullmatch(schema) is not None:
        return True
    return is_yaml(path) and any(_SCHEMA_VALUE.fullmatch(found) for found in _named_schemas(text))


def _named_schemas(text: bytes) -> list[str]:
    """The schemas a YAML file names by a modeline: a comment line at the start of a line, or an
    indented one among the comments that open the file (after that, an indented line may be a
    block scalar's text). A byte order mark is no part of the first line."""
    decoded = text.decode("utf-8-sig", "replace")
    found = _MODELINE.findall(decoded)
    for line in decoded.splitlines():
        opening = line.strip()
        if opening and not opening.startswith("#"):
            break
        named = _MODELINE.fullmatch(opening)
        if named is not None:
            found.append(named.group(1))
    return found


def _one(command: str, path: str, strict: bool) -> bool:
    """Validate (and lint) one contract, print what is wrong; True when it fails the hook."""
    from agent_invariants.contract import load_contract
    from agent_invariants.contract_source import pointer_lines, read_contract
    from agent_invariants.errors import InputError

    try:
        source = read_contract(path)
        contract = load_contract(source)
    except InputError as exc:
        sys.stderr.write(said(str(exc)))
        return True
    if command == "validate":
        return False
    from agent_invariants.lint import lint_contract

    report = lint_contract(contract)
    lines = pointer_lines(source, [rule.id for rule in contract.rules], [item.pointer for item in report.findings])
    for finding in report.findings:
        where = f"{inert(path, TEXT_LIMIT)}:{lines.get(finding.pointer, 1)}"
        rules = ", ".join(inert(rule) for rule in finding.rule_ids)
        # (a CI runner reads `::` at the start of a line and `##[` anywhere as its commands: the
        # line starts with the contract's name)
        line = f"{where}: {finding.level} {finding.code} [{rules}]: {inert(finding.message)}\n"
        sys.stdout.write(log_safe_report(line, "text"))
    return bool(report.errors or (strict and report.findings))


if __name__ == "__main__":
    raise SystemExit(main())
