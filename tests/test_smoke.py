"""The bundled examples run end to end through the CLI with the documented exit codes."""
from support import EXAMPLES


def test_refund_baseline_passes(cli):
    result = cli("check", "--contract", str(EXAMPLES / "refund-desk/contract.json"),
                 "--trace", str(EXAMPLES / "refund-desk/baseline.jsonl"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("PASS  refund-desk")
