"""The bundled examples run end to end through the CLI with the documented exit codes."""
from support import EXAMPLES


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
