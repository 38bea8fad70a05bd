"""check_trace is a pure function of (contract, path or bytes), so it maps over many traces on an
existing distributed engine. This runs the README's Dask example on the local scheduler."""
import os
import shutil
import subprocess
import sys

import dask.bag as dask_bag
import pytest

from agent_invariants import check_trace, load_contract

from support import EXAMPLES, REPO


@pytest.mark.slow
def test_readme_dask_script_runs_as_it_stands(tmp_path):
    """The README's Dask block, saved as a script and run in a folder of traces."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("```python\nimport glob\n\nimport dask.bag")
    script = readme[start + len("```python\n"):readme.index("```", start + 3)]
    (tmp_path / "script.py").write_text(script, encoding="utf-8")
    shutil.copy(EXAMPLES / "refund-desk/contract.json", tmp_path / "agent-invariants.json")
    (tmp_path / "runs").mkdir()
    for number in range(6):
        source = "baseline" if number % 2 else "candidate"
        shutil.copy(EXAMPLES / f"refund-desk/{source}.jsonl", tmp_path / "runs" / f"run-{number}.jsonl")
    result = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "['runs/run-0.jsonl', 'runs/run-2.jsonl', 'runs/run-4.jsonl']\n"


@pytest.fixture
def environment_kept():
    """Dask's process scheduler sets PYTHONHASHSEED in this process's environment, for its workers
    to inherit, and leaves it there: it is put back as it was."""
    before = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(before)


@pytest.mark.slow
def test_checks_on_dask_workers_equal_single_runs(tmp_path, environment_kept):
    paths = []
    for number in range(6):
        source = "baseline" if number % 2 else "candidate"
        target = tmp_path / f"run-{number}.jsonl"
        shutil.copy(EXAMPLES / f"refund-desk/{source}.jsonl", target)
        paths.append(str(target))
    contract = load_contract(str(EXAMPLES / "refund-desk/contract.json"))
    reports = (
        dask_bag.from_sequence(paths, npartitions=3)
        .map(lambda path: check_trace(contract, path))
        .compute(scheduler="processes", num_workers=2)
    )
    assert [report.trace for report in reports] == paths
    assert [report.passed for report in reports] == [False, True] * 3
    assert reports == [check_trace(contract, path) for path in paths]


def test_the_contract_and_reports_survive_pickling():
    import pickle

    contract = load_contract(str(EXAMPLES / "refund-desk/contract.json"))
    report = check_trace(contract, str(EXAMPLES / "refund-desk/candidate.jsonl"))
    assert pickle.loads(pickle.dumps(contract)) == contract
    assert pickle.loads(pickle.dumps(report)) == report
