"""The bundled examples run end to end through the CLI with the documented exit codes."""
import pytest

from support import EXAMPLES


@pytest.mark.slow
def test_refund_baseline_passes(cli):
    result = cli("check", "--contract", str(EXAMPLES / "refund-desk/contract.json"),
                 "--trace", str(EXAMPLES / "refund-desk/baseline.jsonl"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PASS  refund-desk")


def test_every_public_name_imports_and_nothing_public_is_missing_from_all():
    """`__all__` is spelled out for linters and type checkers; it must match what loads lazily."""
    import agent_invariants

    assert set(agent_invariants.__all__) == {"__version__", *agent_invariants._EXPORTS}
    for name in agent_invariants.__all__:
        assert getattr(agent_invariants, name) is not None, name


@pytest.mark.slow
def test_every_import_is_declared_and_every_dependency_has_a_job():
    """Each third-party module the package imports comes from a declared distribution (a
    dependency, or the extra that needs it), and each dependency is imported: none arrives only
    through another package, none is installed for nothing."""
    import ast
    import importlib.metadata
    import re
    import sys
    import tomllib

    project = tomllib.loads((EXAMPLES.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> set[str]:
        return {re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")
                for requirement in requirements}

    core = names(project["dependencies"])
    extras = names([req for extra, reqs in project["optional-dependencies"].items() if extra != "test"
                    for req in reqs])
    imported: set[str] = set()
    for path in (EXAMPLES.parent / "agent_invariants").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    # _typeshed: typeshed's names for type checkers, imported only under `if TYPE_CHECKING:`
    third_party = imported - set(sys.stdlib_module_names) - {"agent_invariants", "_typeshed"}
    distributions = importlib.metadata.packages_distributions()
    used = {name.lower().replace("_", "-") for module in third_party for name in distributions[module]}
    assert used <= core | extras, f"imported but not declared: {sorted(used - core - extras)}"
    assert core <= used, f"declared but never imported: {sorted(core - used)}"
