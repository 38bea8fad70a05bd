"""check_trace is a pure function of (contract, path or bytes), so it maps over many traces on an
existing distributed engine. This runs the README's Dask example on the local scheduler."""
import shutil

import dask.bag as dask_bag
import pytest

from agent_invariants import check_trace, load_contract

from support import EXAMPLES


@pytest.mark.slow
def test_readme_dask_example_matches_single_runs(tmp_path):
    paths = []
    for number in range(6):
        source = "baseline" if number % 2 else "candidate"
        target = tmp_path / f"run-{number}.jsonl"
        shutil.copy(EXAMPLES / f"refund-desk/{source}.jsonl", target)
        paths.append(str(target))

    # --- the README example ---
    contract = load_contract(str(EXAMPLES / "refund-desk/contract.json"))
    reports = (
        dask_bag.from_sequence(paths, npartitions=3)
        .map(lambda path: check_trace(contract, path))
        .compute(scheduler="processes", num_workers=2)
    )
    # ---
    assert [report.trace for report in reports] == paths
    assert [report.passed for report in reports] == [False, True] * 3
    assert reports == [check_trace(contract, path) for path in paths]


def test_the_contract_and_reports_survive_pickling():
    import pickle

    contract = load_contract(str(EXAMPLES / "refund-desk/contract.json"))
    report = check_trace(contract, str(EXAMPLES / "refund-desk/candidate.jsonl"))
    assert pickle.loads(pickle.dumps(contract)) == contract
    assert pickle.loads(pickle.dumps(report)) == report
