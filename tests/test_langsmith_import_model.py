"""A reference model of the LangSmith runs importer (`convert --from langsmith`), written from spec v2
§7 (the `langsmith` row and the common rules) and §10 points 26-36, checked on random run trees and on
small hand-written cases.

The model (`expected_events`) states each rule it applies next to the code that applies it.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli
from support import examples

BASE = "2026-01-01T00:00:"
Json = Any


# -- runs ------------------------------------------------------------------------------------------


@dataclass
class Run:
    """One LangSmith run; times are ticks (a tick is 0.25 s plus a microsecond part)."""

    id: str
    name: str
    run_type: str
    start: int
    end: int | None
    parent: Run | None = None
    inputs: Json = None
    outputs: Json = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    children: list[Run] = field(default_factory=list)
    trace: str = ""

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1


def iso(tick: int) -> str:
    """Tick -> ISO time; the microsecond digits make the "kept to the microsecond" rule visible."""
    micros = tick * 250_000 + 17
    return f"{BASE}{micros // 1_000_000:02d}.{micros % 1_000_000:06d}Z"


def micros(tick: int) -> int:
    return tick * 250_000 + 17


def dotted(run: Run) -> str:
    part = f"20260101T0000{micros(run.start) // 1_000_000:02d}{micros(run.start) % 1_000_000:06d}Z{run.id}"
    return part if run.parent is None else f"{dotted(run.parent)}.{part}"


def record(run: Run, nested: bool) -> dict[str, Any]:
    """The run as LangSmith writes it (nested: with its `child_runs`, listed in reverse)."""
    out: dict[str, Any] = {"id": run.id, "name": run.name, "run_type": run.run_type,
                           "start_time": iso(run.start), "end_time": None if run.end is None else iso(run.end),
                           "parent_run_id": None if run.parent is None else run.parent.id,
                           "trace_id": run.trace, "dotted_order": dotted(run), "error": run.error,
                           "extra": run.extra, "tags": []}
    if run.inputs is not None:
        out["inputs"] = run.inputs
    if run.outputs is not None:
        out["outputs"] = run.outputs
    if nested:
        # Out of order on purpose: §7 "Ordered by dotted_order", not by list position.
        out["child_runs"] = [record(child, True) for child in reversed(run.children)]
    return out


def walk(run: Run) -> list[Run]:
    return [run, *(r for child in run.children for r in walk(child))]


def ai_message(text: str, calls: list[tuple[str, str]]) -> dict[str, Any]:
    """An llm run's outputs as langchain-core writes them (an AIMessage in `generations`)."""
    kwargs = {"content": text, "type": "ai",
              "tool_calls": [{"name": n, "args": {}, "id": i, "type": "tool_call"} for n, i in calls]}
    message = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
               "kwargs": kwargs}
    return {"generations": [[{"text": text, "type": "ChatGeneration", "message": message}]]}


def tool_message(content: str, call_id: str | None, status: str) -> dict[str, Any]:
    message: dict[str, Any] = {"content": content, "type": "tool", "name": "x", "status": status}
    if call_id is not None:
        message["tool_call_id"] = call_id
    return {"output": message}


# -- the model -------------------------------------------------------------------------------------


def parsed(text: str) -> Json:
    """Point 26: text that is valid JSON is parsed, else kept as the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def tool_args(inputs: Json) -> Json:
    """Point 27: `inputs` is the args object; `inputs.input` only when it is a string holding a JSON
    object (generated inputs hold `input` alone, see the report: with other keys beside it the
    product keeps the whole object)."""
    if isinstance(inputs, dict) and isinstance(inputs.get("input"), str):
        value = parsed(inputs["input"])
        if isinstance(value, dict):
            return value
    return inputs


def llm_calls(run: Run) -> list[tuple[str, str]]:
    message = run.outputs["generations"][0][0]["message"]["kwargs"]
    return [(c["name"], c["id"]) for c in message["tool_calls"]]


def nearest_llm(tool: Run, ordered: list[Run]) -> Run | None:
    """Point 28: the nearest earlier LLM run under the tool's parent or an ancestor. "Earlier" is
    read as ended by the tool's start (generated LLM runs never overlap a tool run)."""
    ancestors, node = set(), tool.parent
    while node is not None:
        ancestors.add(node.id)
        node = node.parent
    found = [r for r in ordered if r.run_type == "llm" and r.parent is not None and r.parent.id in ancestors
             and r.end is not None and r.end <= tool.start]
    return max(found, key=lambda r: r.end or 0) if found else None


def source(run: Run, file: str, lines: dict[str, int]) -> dict[str, Any]:
    """§7: `data.source` holds {format, file, line, span_id}; the span is the run id."""
    return {"format": "langsmith", "file": file, "line": lines[run.id], "span_id": run.id}


def expected_events(root: Run, file: str, lines: dict[str, int]) -> list[dict[str, Any]]:
    """The native events of one root run (§7 common rules, the langsmith row, points 26-28, 36)."""
    ordered = sorted(walk(root), key=dotted)  # §7: ordered by dotted_order (the "source order")
    rank = {r.id: i for i, r in enumerate(ordered)}
    staged: list[tuple[int, int, int, int, int, dict[str, Any]]] = []

    def add(run: Run, tick: int, end: bool, event: dict[str, Any]) -> None:
        # §7: at equal times deeper ends, shallower ends, shallower starts, deeper starts, then
        # source order; a run's own start stays before its own end.
        depth = run.depth
        staged.append((micros(tick), 0 if end else 1, -depth if end else depth, rank[run.id], int(end),
                       {"type": event.pop("type"), "time": iso(tick), "run_id": root.trace, **event}))

    used: dict[tuple[str, str], int] = {}
    for run in ordered:
        src = source(run, file, lines)
        if run is root:
            # §7: the root becomes run.start and run.completed, or run.failed (status failed) on
            # error; point 31: the error text is the reason. Root `outputs` -> `output`.
            add(run, run.start, False, {"type": "run.start", "data": {"source": src}})
            if run.end is not None:
                last: dict[str, Any] = {"type": "run.failed" if run.error else "run.completed"}
                if run.error:
                    last |= {"status": "failed", "reason": run.error}
                if isinstance(run.outputs, dict):
                    last["output"] = run.outputs.get("output", run.outputs)
                last |= {"duration_ms": (micros(run.end) - micros(run.start)) / 1000, "data": {"source": src}}
                add(run, run.end, True, last)
        elif run.run_type == "tool":
            call = {"type": "tool.call", "tool": run.name}
            output = (run.outputs or {}).get("output", None) if isinstance(run.outputs, dict) else None
            has_output = isinstance(run.outputs, dict) and "output" in run.outputs
            message = output if isinstance(output, dict) and output.get("type") == "tool" else None
            # Point 27: ToolMessage tool_call_id, extra.tool_call_id; point 28: the model's id by
            # name and order (every tool run of that name after the LLM takes the next slot); else
            # the run id.
            call_id = (message or {}).get("tool_call_id") or run.extra.get("tool_call_id")
            llm = nearest_llm(run, ordered)
            if llm is not None:
                slot = used.get((llm.id, run.name), 0)
                used[(llm.id, run.name)] = slot + 1
                ids = [i for n, i in llm_calls(llm) if n == run.name]
                if call_id is None and slot < len(ids):
                    call_id = ids[slot]
            call["call_id"] = call_id or run.id
            data: dict[str, Any] = {}
            if run.inputs is not None:
                call["args"] = tool_args(run.inputs)
            add(run, run.start, False, call | {"data": data | {"source": src}})
            if run.end is not None:  # README: a call whose run never ended gets no result
                result: dict[str, Any] = {"type": "tool.result", "tool": run.name, "call_id": call["call_id"]}
                if message is not None:
                    result["result"] = parsed(message["content"])
                elif has_output:
                    result["result"] = parsed(output) if isinstance(output, str) else output
                # Point 27: a run `error` or a ToolMessage with status error is ok: false.
                failed = bool(run.error) or (message is not None and message.get("status") == "error")
                result["ok"] = not failed
                result["duration_ms"] = (micros(run.end) - micros(run.start)) / 1000
                extra_data = {"error": run.error} if run.error else {}
                add(run, run.end, True, result | {"data": extra_data | {"source": src}})
        elif run.run_type == "llm" and run.end is not None:
            text = run.outputs["generations"][0][0]["message"]["kwargs"]["content"]
            if text:  # the langsmith row: assistant messages -> agent.message (at the run's end)
                add(run, run.end, True, {"type": "agent.message", "actor": "agent",
                                         "data": {"text": text, "source": src}})
        elif run.run_type == "chain" and run.name in CONVENTION:
            # §7 built-in convention: a run named after an event type is that event, fields from
            # extra.metadata.ainv; point 36: at the run's start, `args` may be JSON text.
            fields = dict(run.extra["metadata"]["ainv"])
            if isinstance(fields.get("args"), str):
                fields["args"] = json.loads(fields["args"])
            add(run, run.start, False, {"type": run.name, **fields, "data": {"source": src}})
    events = [item[-1] for item in sorted(staged, key=lambda s: s[:5])]
    # §7: a repeated call_id gets ~n and the original goes to data.native_call_id.
    seen: dict[str, int] = {}
    renamed: dict[int, str] = {}
    pending: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if event["type"] == "tool.call":
            native = event["call_id"]
            seen[native] = seen.get(native, 0) + 1
            if seen[native] > 1:
                renamed[index] = native
                event["call_id"] = f"{native}~{seen[native]}"
                event["data"] = {"native_call_id": native, **event["data"]}
            pending.setdefault(native, []).append(index)
    for event in events:
        if event["type"] == "tool.result":
            call_index = next(i for i in pending[event["call_id"]] if events[i]["data"]["source"]["span_id"]
                              == event["data"]["source"]["span_id"])
            if call_index in renamed:
                event["call_id"] = events[call_index]["call_id"]
                event["data"] = {"native_call_id": renamed[call_index], **event["data"]}
    # §7: seq 1..n in this order.
    return [{"seq": i + 1, **event} for i, event in enumerate(events)]


CONVENTION = {"approval.granted", "control.stop"}


# -- generation ------------------------------------------------------------------------------------

TOOLS = ("search", "fetch", "shell")
CALL_IDS = ("call_a", "call_b", "call_c")
TEXTS = ("hello world", '{"n": 1}', "[1, 2]", "42", "not json at all")


@dataclass
class Builder:
    draw: Any
    trace: str
    count: int = 0
    tick: int = 0

    def new_id(self) -> str:
        self.count += 1
        return f"{self.trace}-{self.count:03d}"

    def gap(self) -> None:
        self.tick += self.draw(st.integers(0, 1))  # 0: equal times across runs

    def child(self, parent: Run, budget: int) -> tuple[Run, int]:
        kind = self.draw(st.sampled_from(["llm", "tool", "tool", "chain", "convention"] if budget > 1
                                         else ["llm", "tool", "tool", "convention"]))
        self.gap()
        start = self.tick
        run_id = self.new_id()
        if kind == "chain":
            run = Run(run_id, "sub", "chain", start, None, parent, trace=self.trace)
            used = 1
            for _ in range(self.draw(st.integers(1, min(3, budget - 1)))):
                if used >= budget:
                    break
                grandchild, size = self.child(run, budget - used)
                run.children.append(grandchild)
                used += size
            self.gap()
            run.end = self.tick
            return run, used
        self.tick += 1 + self.draw(st.integers(0, 2))  # at least one tick: no zero-length run
        end = self.tick
        if kind == "llm":
            calls = self.draw(st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(CALL_IDS)), max_size=3))
            text = self.draw(st.sampled_from(["", "Thinking.", "Done."]))
            return Run(run_id, "model", "llm", start, end, parent, outputs=ai_message(text, calls),
                       trace=self.trace), 1
        if kind == "convention":
            name = self.draw(st.sampled_from(sorted(CONVENTION)))
            ainv: dict[str, Any] = ({"approval_id": "ap1", "approved": True, "args": '{"x": 1}'}
                                    if name == "approval.granted" else {"reason": "budget"})
            return Run(run_id, name, "chain", start, end, parent, extra={"metadata": {"ainv": ainv}},
                       trace=self.trace), 1
        return self.tool(run_id, parent, start, end), 1

    def tool(self, run_id: str, parent: Run, start: int, end: int) -> Run:
        name = self.draw(st.sampled_from(TOOLS))
        inputs = self.draw(st.sampled_from([None, {"q": 1}, {"input": '{"q": 2}'}, {"input": "plain words"},
                                            {"input": "[1]"}]))
        kind = self.draw(st.sampled_from(["none", "value", "text", "message"]))
        outputs: Json = None
        if kind == "value":
            outputs = {"output": self.draw(st.sampled_from([None, 3, {"k": [1]}]))}
        elif kind == "text":
            outputs = {"output": self.draw(st.sampled_from(TEXTS))}
        elif kind == "message":
            outputs = tool_message(self.draw(st.sampled_from(TEXTS)),
                                   self.draw(st.sampled_from([None, *CALL_IDS])),
                                   self.draw(st.sampled_from(["success", "error"])))
        extra = {"tool_call_id": self.draw(st.sampled_from(CALL_IDS))} if self.draw(st.booleans()) else {}
        error = self.draw(st.sampled_from([None, None, "ValueError('boom')"]))
        unfinished = self.draw(st.integers(0, 9)) == 0
        # An unfinished run is generated without `error` (the product emits a result for an errored
        # run without end_time: spec silent, left out).
        return Run(run_id, name, "tool", start, None if unfinished else end, parent, inputs=inputs,
                   outputs=outputs, error=None if unfinished else error, extra=extra, trace=self.trace)


@st.composite
def files(draw: Any) -> tuple[list[Run], bool]:
    """1..3 roots (a chain each, with 1..10 descendants), given nested or one run per line."""
    roots = []
    for number in range(draw(st.integers(1, 3))):
        builder = Builder(draw, f"r{number}")
        builder.tick = draw(st.integers(0, 3))
        root = Run(builder.new_id(), "agent", "chain", builder.tick, None, None, trace="")
        # trace_id is given (as LangSmith writes it): see the report on runs without one.
        root.trace = builder.trace
        budget, used = draw(st.integers(1, 10)), 0
        while used < budget:
            child, size = builder.child(root, budget - used)
            root.children.append(child)
            used += size
        builder.gap()
        root.end = builder.tick
        root.outputs = draw(st.sampled_from([None, {"output": "Done."}, {"output": {"a": 1}}]))
        root.error = draw(st.sampled_from([None, None, "RuntimeError: stopped"]))
        roots.append(root)
    return roots, draw(st.booleans())


def write_file(path: Path, roots: list[Run], nested: bool, shuffle: Any) -> dict[str, int]:
    """Writes the runs; returns each run's 1-based line."""
    lines: dict[str, int] = {}
    texts: list[str] = []
    if nested:
        for number, root in enumerate(roots, start=1):
            texts.append(json.dumps(record(root, True)))
            for run in walk(root):
                lines[run.id] = number
    else:
        every = [run for root in roots for run in walk(root)]
        every = shuffle(every)
        # Lines in random order (roots mixed): order comes from dotted_order and times only.
        for number, run in enumerate(every, start=1):
            texts.append(json.dumps(record(run, False)))
            lines[run.id] = number
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    return lines


def convert_all(cli: Cli, folder: Path) -> dict[str, list[dict[str, Any]]]:
    proc = cli("convert", "--from", "langsmith", "in.jsonl", "--run", "all", "--out-dir", "out")
    assert proc.returncode == 0, proc.stderr
    return {p.stem: [json.loads(line) for line in p.read_text().splitlines()]
            for p in sorted((folder / "out").glob("*.jsonl"))}


@settings(max_examples=examples(75), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files(), st.randoms(use_true_random=False))
def test_random_run_trees_match_the_model(case: tuple[list[Run], bool], rnd: Any) -> None:
    """Every event of every run equals the model's (whole JSON), for nested and one-per-line files."""
    roots, nested = case
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        lines = write_file(folder / "in.jsonl", roots, nested, lambda xs: rnd.sample(xs, len(xs)))
        got = convert_all(Cli(folder), folder)
        expected = {root.trace: expected_events(root, "in.jsonl", lines) for root in roots}
        for run_id, events in expected.items():
            for want, have in zip(events, got.get(run_id, []), strict=False):
                assert have == want
        assert got == expected


# -- hand-written cases ----------------------------------------------------------------------------


def convert(cli: Cli, tmp_path: Path, *records: Any, extra: tuple[str, ...] = ()) -> Any:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    (tmp_path / "in.jsonl").write_text(text, encoding="utf-8")
    return cli("convert", "--from", "langsmith", "in.jsonl", *extra)


def events_of(proc: Any) -> list[dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def rec(run_id: str, run_type: str, start: str, end: str | None, **fields: Any) -> dict[str, Any]:
    return {"id": run_id, "name": fields.pop("name", run_id), "run_type": run_type,
            "start_time": f"{BASE}{start}Z", "end_time": None if end is None else f"{BASE}{end}Z",
            "trace_id": fields.pop("trace_id", "R"), **fields}


def root(*children: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return rec("R", "chain", "01", "30", name="agent", child_runs=list(children), **fields)


def tool(run_id: str, start: str, end: str | None, **fields: Any) -> dict[str, Any]:
    return rec(run_id, "tool", start, end, parent_run_id=fields.pop("parent", "R"), **fields)


def llm(run_id: str, start: str, end: str, calls: list[tuple[str, str]], text: str = "",
        **fields: Any) -> dict[str, Any]:
    return rec(run_id, "llm", start, end, parent_run_id=fields.pop("parent", "R"),
               outputs=ai_message(text, calls), **fields)


def brief(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["type"], e["data"]["source"]["span_id"], e.get("call_id")) for e in events]


def test_root_maps_to_start_and_completed_with_output(cli: Cli, tmp_path: Path) -> None:
    """§7: the root becomes run.start and run.completed; langsmith row: root `outputs` -> `output`;
    point 36: ISO times kept to the microsecond; `duration_ms` = end - start."""
    got = events_of(convert(cli, tmp_path, rec("R", "chain", "01.123456", "02.5", outputs={"output": "Done."})))
    source = {"format": "langsmith", "file": "in.jsonl", "line": 1, "span_id": "R"}
    assert got == [
        {"seq": 1, "type": "run.start", "time": f"{BASE}01.123456Z", "run_id": "R", "data": {"source": source}},
        {"seq": 2, "type": "run.completed", "time": f"{BASE}02.500000Z", "run_id": "R", "output": "Done.",
         "duration_ms": 1376.544, "data": {"source": source}},
    ]


def test_root_error_is_run_failed_with_reason(cli: Cli, tmp_path: Path) -> None:
    """§7: run.failed (`status: failed`) on error; point 31: the error text goes to `reason`."""
    last = events_of(convert(cli, tmp_path, rec("R", "chain", "01", "02", error="boom")))[-1]
    assert (last["type"], last["status"], last["reason"]) == ("run.failed", "failed", "boom")


def test_nanosecond_fraction_is_cut_to_the_microsecond(cli: Cli, tmp_path: Path) -> None:
    """Point 36: ISO strings are kept to the microsecond (an offset is turned into UTC, §7)."""
    run = rec("R", "chain", "01", "02")
    run["start_time"] = "2026-01-01T01:00:01.123456789+01:00"
    assert events_of(convert(cli, tmp_path, run))[0]["time"] == f"{BASE}01.123456Z"


def test_tool_args_from_inputs_and_parsed_input(cli: Cli, tmp_path: Path) -> None:
    """Point 27: `inputs` is the args object; `inputs.input` only when it is a string that parses as
    a JSON object."""
    got = events_of(convert(cli, tmp_path, root(
        tool("a", "02", "03", inputs={"q": 1}), tool("b", "04", "05", inputs={"input": '{"q": 2}'}),
        tool("c", "06", "07", inputs={"input": "[1]"}), tool("d", "08", "09", inputs={"input": "text"}))))
    assert [e["args"] for e in got if e["type"] == "tool.call"] == [
        {"q": 1}, {"q": 2}, {"input": "[1]"}, {"input": "text"}]


def test_tool_result_from_output_and_tool_message(cli: Cli, tmp_path: Path) -> None:
    """Point 27: the result is `outputs.output.content` for a ToolMessage, else `outputs.output`;
    point 26: text that is JSON is parsed, other text stays a string."""
    got = events_of(convert(cli, tmp_path, root(
        tool("a", "02", "03", outputs={"output": "[1, 2]"}),
        tool("b", "04", "05", outputs={"output": {"k": 1}}),
        tool("c", "06", "07", outputs=tool_message('{"x": 1}', "id1", "success")),
        tool("d", "08", "09", outputs=tool_message("plain", "id2", "success")))))
    assert [e["result"] for e in got if e["type"] == "tool.result"] == [[1, 2], {"k": 1}, {"x": 1}, "plain"]


def test_ok_false_on_error_or_tool_message_status_error(cli: Cli, tmp_path: Path) -> None:
    """Point 27: a ToolMessage with status error or a run with `error` is ok: false."""
    got = events_of(convert(cli, tmp_path, root(
        tool("a", "02", "03", outputs={"output": "x"}), tool("b", "04", "05", error="boom"),
        tool("c", "06", "07", outputs=tool_message("bad", "id1", "error")))))
    assert [e["ok"] for e in got if e["type"] == "tool.result"] == [True, False, False]


def test_call_id_sources_in_order(cli: Cli, tmp_path: Path) -> None:
    """Point 27: the ToolMessage's tool_call_id, then extra.tool_call_id, then the run id."""
    got = events_of(convert(cli, tmp_path, root(
        tool("a", "02", "03", outputs=tool_message("x", "tm1", "success"), extra={"tool_call_id": "ex1"}),
        tool("b", "04", "05", extra={"tool_call_id": "ex2"}), tool("c", "06", "07"))))
    assert [e["call_id"] for e in got if e["type"] == "tool.call"] == ["tm1", "ex2", "c"]


def test_model_side_call_ids_by_name_and_order(cli: Cli, tmp_path: Path) -> None:
    """Point 28: ids from the nearest earlier LLM run under the same parent (or an ancestor),
    matched by tool name and order; an LLM inside a sibling chain is not an ancestor's."""
    sibling = rec("S", "chain", "05", "06", parent_run_id="R",
                  child_runs=[llm("L2", "05", "06", [("fetch", "F")], parent="S")])
    chain = rec("C", "chain", "10", "20", parent_run_id="R", child_runs=[tool("t3", "11", "12", name="fetch",
                                                                                parent="C")])
    got = events_of(convert(cli, tmp_path, root(
        llm("L1", "02", "03", [("search", "A"), ("search", "B"), ("fetch", "C1")]),
        tool("t1", "03", "04", name="search"), tool("t2", "04", "05", name="search"), sibling, chain)))
    assert [e["call_id"] for e in got if e["type"] == "tool.call"] == ["A", "B", "C1"]


def test_model_side_ids_only_from_the_nearest_llm(cli: Cli, tmp_path: Path) -> None:
    """Point 28: the *nearest* earlier LLM run is the one matched (no fall back to an older one); an
    LLM run that starts after the tool is not earlier."""
    got = events_of(convert(cli, tmp_path, root(
        llm("L1", "02", "03", [("fetch", "OLD")]), llm("L2", "03", "04", [("search", "B")]),
        tool("t1", "05", "06", name="fetch"), tool("t2", "06", "07", name="search"),
        tool("t3", "08", "09", name="late"), llm("L3", "10", "11", [("late", "L")]))))
    assert [e["call_id"] for e in got if e["type"] == "tool.call"] == ["t1", "B", "t3"]


def test_repeated_call_id_gets_tilde_n(cli: Cli, tmp_path: Path) -> None:
    """§7: a repeated id gets `~n`, and the original goes to `data.native_call_id`."""
    got = events_of(convert(cli, tmp_path, root(
        tool("a", "02", "03", extra={"tool_call_id": "X"}), tool("b", "04", "05", extra={"tool_call_id": "X"}),
        tool("c", "06", "07", extra={"tool_call_id": "X"}))))
    calls = [(e["call_id"], e["data"].get("native_call_id")) for e in got if e["type"].startswith("tool.")]
    assert calls == [("X", None), ("X", None), ("X~2", "X"), ("X~2", "X"), ("X~3", "X"), ("X~3", "X")]


def test_assistant_text_is_agent_message_at_the_llm_end(cli: Cli, tmp_path: Path) -> None:
    """Langsmith row: assistant messages -> agent.message (the text in `data.text`); calls are never
    read from the model's messages."""
    got = events_of(convert(cli, tmp_path, root(llm("L", "02", "03", [("shell", "S")], text="Hi."))))
    assert [(e["type"], e["time"], e.get("data", {}).get("text")) for e in got] == [
        ("run.start", f"{BASE}01.000000Z", None), ("agent.message", f"{BASE}03.000000Z", "Hi."),
        ("run.completed", f"{BASE}30.000000Z", None)]


def test_convention_run_becomes_its_event(cli: Cli, tmp_path: Path) -> None:
    """§7 built-in convention: a run named after one of our event types is that event, fields from
    `extra.metadata.ainv`; point 36: at the run's start, `args` may be JSON text."""
    run = rec("G", "chain", "02", "03", name="approval.granted", parent_run_id="R",
              extra={"metadata": {"ainv": {"approval_id": "a1", "approved": True, "args": '{"x": 1}'}}})
    got = events_of(convert(cli, tmp_path, root(run)))[1]
    assert {k: got[k] for k in ("type", "time", "approval_id", "approved", "args")} == {
        "type": "approval.granted", "time": f"{BASE}02.000000Z", "approval_id": "a1", "approved": True,
        "args": {"x": 1}}


def test_equal_times_ends_before_starts(cli: Cli, tmp_path: Path) -> None:
    """§7: at equal times deeper ends, shallower ends, shallower starts, deeper starts."""
    chain = rec("C", "chain", "03", "05", parent_run_id="R", child_runs=[tool("b", "03", "05", parent="C")])
    got = events_of(convert(cli, tmp_path, root(tool("a", "02", "03"), chain, tool("c", "05", "06"))))
    assert brief(got)[1:-1] == [("tool.call", "a", "a"), ("tool.result", "a", "a"), ("tool.call", "b", "b"),
                                ("tool.result", "b", "b"), ("tool.call", "c", "c"), ("tool.result", "c", "c")]


def test_children_ordered_by_dotted_order_not_list_position(cli: Cli, tmp_path: Path) -> None:
    """Langsmith row: `child_runs` flattened and ordered by dotted_order (equal times: source order)."""
    first = tool("a", "02", "04", dotted_order="1.1")
    second = tool("b", "02", "04", dotted_order="1.2")
    got = events_of(convert(cli, tmp_path, root(second, first, dotted_order="1")))
    assert [e["data"]["source"]["span_id"] for e in got if e["type"] == "tool.call"] == ["a", "b"]


def test_unfinished_tool_gets_no_result(cli: Cli, tmp_path: Path) -> None:
    """README (import rules): a call whose run never ended gets no result."""
    got = events_of(convert(cli, tmp_path, root(tool("a", "02", None))))
    assert [e["type"] for e in got] == ["run.start", "tool.call", "run.completed"]


def test_one_run_per_line_keeps_each_records_line(cli: Cli, tmp_path: Path) -> None:
    """README: runs may be given one per line; `data.source.line` is the line of the run's record."""
    got = events_of(convert(cli, tmp_path, tool("a", "02", "03"), rec("R", "chain", "01", "05")))
    assert [(e["type"], e["data"]["source"]["line"]) for e in got] == [
        ("run.start", 2), ("tool.call", 1), ("tool.result", 1), ("run.completed", 2)]


def test_several_roots_need_run_or_out_dir(cli: Cli, tmp_path: Path) -> None:
    """Point 34: without --run an input with several runs is exit 2; the message lists the run ids
    and both options."""
    proc = convert(cli, tmp_path, rec("A", "chain", "01", "02", trace_id="A"),
                   rec("B", "chain", "01", "02", trace_id="B"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "A" in proc.stderr and "B" in proc.stderr and "--run" in proc.stderr and "--out-dir" in proc.stderr


def test_run_option_selects_one_root(cli: Cli, tmp_path: Path) -> None:
    """Point 34: `--run ID` converts that run only."""
    got = events_of(convert(cli, tmp_path, rec("A", "chain", "01", "02", trace_id="A"),
                            rec("B", "chain", "03", "04", trace_id="B"), extra=("--run", "B")))
    assert {e["run_id"] for e in got} == {"B"} and len(got) == 2


def test_child_without_trace_id_belongs_to_its_root(cli: Cli, tmp_path: Path) -> None:
    """Langsmith row / README: one root run per line with nested `child_runs` (or one run per line
    with parent_run_id); each LangSmith root run is one run."""
    parent = {"id": "R", "name": "agent", "run_type": "chain", "start_time": f"{BASE}01Z",
              "end_time": f"{BASE}05Z"}
    child = {"id": "t", "name": "x", "run_type": "tool", "start_time": f"{BASE}02Z", "end_time": f"{BASE}03Z",
             "parent_run_id": "R"}
    got = events_of(convert(cli, tmp_path, parent, child))
    assert [e["type"] for e in got] == ["run.start", "tool.call", "tool.result", "run.completed"]


# -- hostile input ---------------------------------------------------------------------------------


def refused(proc: Any) -> str:
    """D4: exit 2, nothing on stdout, one stderr line."""
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return str(lines[0])


def test_truncated_line_is_refused_at_its_line(cli: Cli, tmp_path: Path) -> None:
    """D4: bad input names file and line, exit 2."""
    line = refused(convert(cli, tmp_path, rec("R", "chain", "01", "02"), '{"id": "x", "name":'))
    assert "in.jsonl:2" in line


def test_run_without_id_is_refused_with_its_path(cli: Cli, tmp_path: Path) -> None:
    """D4: file:line and the JSON path of the missing id (inside child_runs too)."""
    child = tool("a", "02", "03")
    del child["id"]
    line = refused(convert(cli, tmp_path, root(child)))
    assert "in.jsonl:1" in line and "$.child_runs[0].id" in line


def test_run_without_start_time_is_refused(cli: Cli, tmp_path: Path) -> None:
    """D4 / point 36: a run needs its ISO start time; file:line and path."""
    run = rec("R", "chain", "01", "02")
    del run["start_time"]
    line = refused(convert(cli, tmp_path, run))
    assert "in.jsonl:1" in line and "$.start_time" in line


def test_time_that_is_not_iso_is_refused(cli: Cli, tmp_path: Path) -> None:
    """Point 36: times are ISO strings; anything else is bad input at file:line and its path."""
    run = rec("R", "chain", "01", "02")
    run["end_time"] = "yesterday"
    line = refused(convert(cli, tmp_path, run))
    assert "in.jsonl:1" in line and "$.end_time" in line


def test_record_that_is_not_an_object_is_refused(cli: Cli, tmp_path: Path) -> None:
    """D4: a line that is not a run object names file:line and `$`."""
    assert "in.jsonl:1" in refused(convert(cli, tmp_path, "[1]"))


def test_child_whose_parent_is_missing_stays_in_its_trace(cli: Cli, tmp_path: Path) -> None:
    """Spec silent: a run whose parent is not in the file is kept in its trace (same trace_id), at
    its own line; the product's reading, kept as reasonable."""
    got = events_of(convert(cli, tmp_path, rec("R", "chain", "01", "05"),
                            tool("t", "02", "03", parent="missing")))
    assert brief(got) == [("run.start", "R", None), ("tool.call", "t", "t"), ("tool.result", "t", "t"),
                          ("run.completed", "R", None)]


def test_runs_of_types_the_mapping_does_not_use_are_skipped_and_counted(cli: Cli, tmp_path: Path) -> None:
    """README: records of kinds the mapping does not use are skipped and counted (convert says how
    many); chain runs hold the others and are not such records."""
    proc = convert(cli, tmp_path, root(rec("q", "retriever", "02", "03", parent_run_id="R"),
                                       rec("e", "embedding", "04", "05", parent_run_id="R"),
                                       rec("c", "chain", "06", "07", parent_run_id="R")))
    assert [e["type"] for e in events_of(proc)] == ["run.start", "run.completed"]
    assert "skipped 2 records of kinds the mapping does not use" in proc.stderr


def test_a_cycle_of_parents_is_read_with_the_earliest_run_as_the_root(cli: Cli, tmp_path: Path) -> None:
    """Spec silent: no run lacks a parent, so none is the root; as the OTel importer does with a
    cycle of span parents, the earliest run stands for the run's bounds and nothing is dropped."""
    got = events_of(convert(cli, tmp_path, rec("a", "chain", "02", "06", parent_run_id="b", trace_id="T"),
                            rec("b", "chain", "01", "07", parent_run_id="a", trace_id="T"),
                            tool("t", "03", "04", parent="a", trace_id="T")))
    assert [(e["type"], e["time"][17:19]) for e in got] == [
        ("run.start", "01"), ("tool.call", "03"), ("tool.result", "04"), ("run.completed", "07")]
