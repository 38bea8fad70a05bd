"""Start-up: what a short run imports, how option values are parsed without pydantic, and the
console script's quick exit (its output and exit codes must be exactly those of a normal exit).

Speed itself is measured by the benchmark (`python -m bench --cases startup`), not here.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import EXAMPLES

REFUND = EXAMPLES / "refund-desk"
CONTRACT = str(REFUND / "contract.json")
BASELINE = str(REFUND / "baseline.jsonl")
CANDIDATE = str(REFUND / "candidate.jsonl")


def modules_after(*args: str) -> set[str]:
    """The modules loaded once the command line has run `args` in a fresh interpreter."""
    code = ("import sys\nfrom agent_invariants.cli import app\n"
            f"app(args={list(args)!r}, prog_name='agent-invariants', standalone_mode=False)\n"
            "sys.stdout.flush()\nsys.stderr.write(' '.join(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stderr.split("\n")[-1].split())


def test_a_check_imports_neither_pydantic_nor_the_process_pool():
    loaded = modules_after("check", "--contract", CONTRACT, "--trace", BASELINE, "--format", "json",
                           "--max-violations", "5", "--jobs", "1", "--color", "never", "-q")
    assert "agent_invariants.engine" in loaded   # the command did run
    assert not {name for name in loaded if name.split(".")[0] == "pydantic"}
    assert "concurrent.futures.process" not in loaded


def test_a_check_imports_only_the_rule_kinds_its_contract_names():
    """A kind's module is imported when a contract names it: the refund desk's ten kinds, not the
    other sixteen (nor the timeline, which only the HTML page draws)."""
    named = {rule["kind"] for rule in json.loads((REFUND / "contract.json").read_text(encoding="utf-8"))["rules"]}
    loaded = modules_after("check", "--contract", CONTRACT, "--trace", BASELINE, "--format", "text", "-q")
    kinds = {name.split(".")[-1] for name in loaded if name.startswith("agent_invariants.rules.")}
    assert kinds - {"base", "fields", "matchers", "evidence", "terminal"} == named
    assert "agent_invariants.timeline" not in loaded


def test_a_version_1_check_to_standard_output_leaves_out_what_it_does_not_use():
    """Neither the match grammar (version-2 matchers), nor temporary files (a report written to
    a file, a tally that spills), nor importlib.resources (the pack folder)."""
    loaded = modules_after("check", "--contract", CONTRACT, "--trace", BASELINE, "--format", "json", "-q")
    assert "agent_invariants.rules.matchers" in loaded   # require_order and stop_is_final read through matchers
    assert not loaded & {"agent_invariants.match.tree", "agent_invariants.match.quick", "tempfile",
                         "importlib.resources"}


def test_every_kind_is_listed_in_order_once_asked_for():
    """`RULE_KINDS` imports every kind: the twelve of version 1, then those of version 2, in the
    order of the manual and the schemas, whatever a contract loaded first."""
    code = ("import json\nfrom agent_invariants import load_contract\n"
            "load_contract({'version': 2, 'name': 'n',\n"
            "               'rules': [{'id': 'a', 'kind': 'run_status', 'equals': 'completed'}]})\n"
            "from agent_invariants.rules import RULE_KINDS, ToolArgs\n"
            "print(json.dumps([list(RULE_KINDS), ToolArgs.kind]))\n")
    kinds, tool_args = json.loads(run_python(code))
    assert kinds[:13] == ["deny_tool", "allow_tools", "require_approval", "stop_is_final",
                          "completion_requires_outcome", "retry_limit", "event_budget", "require_order",
                          "require_event", "deny_event", "tool_result_required", "confidence_requires_outcome",
                          "tool_args"]
    assert len(kinds) == 26 and kinds[-1] == "failure_handled" and tool_args == "tool_args"


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_contract_is_a_whole_msgspec_type_before_any_contract_loads():
    """Loading imports only the kinds named, but `Contract` itself still decodes, and describes,
    every kind, whatever ran first."""
    for first in ("", "load_contract({'version': 1, 'name': 'n', 'rules': [{'id': 'a', 'kind': 'deny_tool', "
                      "'tool': 'x'}]})\n"):
        out = run_python(
            "import json, msgspec\nfrom agent_invariants import Contract, load_contract\n" + first +
            "doc = {'version': 2, 'name': 'n', 'rules': [{'id': 'a', 'kind': 'tool_args', 'tool': 'x', "
            "'match': {'n': 1}}]}\n"
            "decoded = msgspec.convert(doc, Contract)\n"
            "kinds = msgspec.json.schema(Contract)['$defs']['Contract']['properties']['rules']['items']\n"
            "print(json.dumps([type(decoded.rules[0]).__name__, len(kinds['anyOf'])]))\n")
        assert json.loads(out) == ["ToolArgsConfig", 26]


def test_a_mapping_loads_with_rules_of_any_shape_msgspec_reads():
    """A tuple of rules, a rule as a read-only mapping, or one already decoded (`[*other.rules, extra]`)."""
    out = run_python(
        "import json, types\nfrom agent_invariants import load_contract\n"
        "first = load_contract({'version': 1, 'name': 'n', 'rules': [{'id': 'a', 'kind': 'deny_tool', 'tool': 'x'}]})\n"
        "rules = (types.MappingProxyType({'id': 'b', 'kind': 'stop_is_final'}), *first.rules)\n"
        "print(json.dumps(load_contract({'version': 1, 'name': 'n', 'rules': rules}).to_dict()['rules']))\n")
    assert json.loads(out) == [{"id": "b", "kind": "stop_is_final"}, {"id": "a", "kind": "deny_tool", "tool": "x"}]


def test_a_kind_taken_out_of_the_registry_stays_out():
    out = run_python(
        "from agent_invariants import ContractError, load_contract\nfrom agent_invariants.rules import RULE_KINDS\n"
        "RULE_KINDS.pop('deny_tool')\n"
        "try:\n    load_contract({'version': 1, 'name': 'n',\n"
        "                   'rules': [{'id': 'a', 'kind': 'deny_tool', 'tool': 'x'}]})\n"
        "except ContractError as error:\n    print(error.problem)\n"
        "print('deny_tool' in RULE_KINDS)\n")
    assert out.startswith('unknown rule kind "deny_tool"') and out.endswith("False\n")


def test_the_version_imports_neither_typer_nor_typing(cli):
    code = ("import sys\nsys.argv = ['agent-invariants', '--version']\n"
            "from agent_invariants.entry import main\n"
            "try:\n    main()\nexcept SystemExit:\n"
            "    sys.stderr.write(' '.join(sorted(sys.modules)))\n")
    done = cli.python("-c", code)
    assert done.stdout == "0.1.0\n"
    loaded = set(done.stderr.split())
    assert "agent_invariants" in loaded
    assert not {"typer", "typing", "msgspec"} & loaded


@pytest.mark.parametrize(("value", "message"), [
    ("x", "Invalid value for '--max-violations': must be an integer, got \"x\""),
    ("1.5", "Invalid value for '--max-violations': must be an integer, got \"1.5\""),
    ("12.", "Invalid value for '--max-violations': must be an integer, got \"12.\""),
    ("\x1c2", "Invalid value for '--max-violations': must be an integer, got \"\\u001c2\""),
    ("٣", "Invalid value for '--max-violations': must be an integer, got \"٣\""),
    ("-1", "Invalid value for '--max-violations': must be 0 or more, got -1"),
    ("9" * 5000, "Invalid value for '--max-violations': must be an integer of at most 4300 digits"),
])
def test_a_bad_integer_is_one_line_naming_the_option(cli, value, message):
    result = cli("check", "--contract", CONTRACT, "--trace", BASELINE, "--max-violations", value)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"agent-invariants: {message} (try 'agent-invariants check --help')\n"


def test_the_lower_bound_of_each_option_is_its_own(cli):
    result = cli("check", "--contract", CONTRACT, "--trace", BASELINE, "--jobs", "0")
    assert result.returncode == 2
    assert "Invalid value for '--jobs' / '-j': must be 1 or more, got 0" in result.stderr


def test_a_choice_outside_the_list_names_the_choices(cli):
    result = cli("check", "--contract", CONTRACT, "--trace", BASELINE, "--color", "NEVER")
    assert result.returncode == 2 and result.stdout == ""
    assert "Invalid value for '--color': 'NEVER' is not one of 'auto', 'always', 'never'." in result.stderr


@pytest.mark.parametrize("spelling", ["1", " 1 ", "+1", "1.0", "0_1"])
def test_integers_are_read_as_before(cli, spelling):
    """What typer's parsing accepted (spaces, a sign, a zero fraction, underscores) still means
    the same number: here one kept violation of the candidate's several."""
    result = cli("check", "--contract", CONTRACT, "--trace", CANDIDATE, "--format", "json",
                 "--max-violations", spelling)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["error_count"] > 1
    assert all(len(rule["violations"]) <= 1 for rule in report["results"])


def test_repeated_and_default_values_reach_the_command(cli):
    """Two traces (a repeated option), an enum given and one left at its default, a path."""
    result = cli("check", "--contract", CONTRACT, "--trace", BASELINE, "--trace", CANDIDATE,
                 "--format", "json", "--output", "out.json", "--quiet")
    assert result.returncode == 1 and result.stdout == ""
    report = json.loads((cli.cwd / "out.json").read_text(encoding="utf-8"))
    assert report["traces"] == 2
    assert [each["trace"] for each in report["reports"]] == [BASELINE, CANDIDATE]


def test_the_console_script_exits_with_the_command_code_and_all_of_its_output(cli):
    """The script ends the process without the interpreter's teardown: the exit code and every
    byte written must be those of the command (a large report through a pipe, and a failure)."""
    many = "\n".join(json.dumps({"seq": n, "type": "tool.call", "tool": "shell.exec"})
                     for n in range(1, 20_001))
    trace = cli.cwd / "many.jsonl"
    trace.write_text(many + "\n", encoding="utf-8")
    (cli.cwd / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}), encoding="utf-8")
    script = [sys.executable, "-c", "from agent_invariants.entry import main; main()"]
    done = subprocess.run([*script, "check", "--contract", "c.json", "--trace", str(trace), "--format", "json",
                           "--max-violations", "0"], cwd=cli.cwd, capture_output=True, timeout=120)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert len(report["violations"]) == report["error_count"] == 20_000
    bad = subprocess.run([*script, "check", "--contract", "c.json", "--trace", "missing.jsonl"], cwd=cli.cwd,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == "agent-invariants: missing.jsonl: no such file\n"
