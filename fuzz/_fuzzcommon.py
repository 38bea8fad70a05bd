"""Shared by the fuzz targets: the crash rule, and optional suppression of already-reported bugs.

The rule: on any input the library returns a verdict or raises `agent_invariants.InputError`.
Every other exception is a finding, and the target re-raises it so atheris writes a crash-* file.

A long campaign stops at the first crash. To keep exploring after a bug has been reported (and
before it is fixed), set FUZZ_SUPPRESS to a comma-separated list of signatures to tolerate, or
to `all`. A signature is `ExceptionType@module:function`, where module:function is the innermost
frame inside agent_invariants (see `signature()`). Suppressed crashes are not silent: the first
few inputs of each signature are written to fuzz/findings/<signature>/ and counted in
fuzz/findings/summary.txt, so a campaign still records every distinct crash it met.
"""
from __future__ import annotations

import hashlib
import os
import sys
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
FINDINGS = os.environ.get("FUZZ_FINDINGS", os.path.join(_HERE, "findings"))
_SUPPRESS = {item.strip() for item in os.environ.get("FUZZ_SUPPRESS", "").split(",") if item.strip()}
_KEEP_PER_SIGNATURE = 5
_seen: dict[str, int] = {}


def signature(exc: BaseException) -> str:
    """`Type@module:function` of the innermost traceback frame in agent_invariants (else the last frame)."""
    if isinstance(exc, OracleMismatch):
        return f"OracleMismatch@{exc.oracle}"
    frames = traceback.extract_tb(exc.__traceback__)
    where = "?"
    for frame in frames:
        name = frame.filename.replace("\\", "/")
        if "/agent_invariants/" in name:
            module = name.rsplit("/agent_invariants/", 1)[1].removesuffix(".py").replace("/", ".")
            where = f"{module}:{frame.name}"
    if where == "?" and frames:
        where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].name}"
    return f"{type(exc).__name__}@{where}"


def finding(exc: BaseException, data: bytes, target: str) -> None:
    """Called for every exception that is not an InputError: re-raise unless suppressed."""
    sig = signature(exc)
    if not (_SUPPRESS and ("all" in _SUPPRESS or sig in _SUPPRESS)):
        sys.stderr.write(f"\n=== FINDING {target}: {sig}\n")
        raise exc
    count = _seen.get(sig, 0) + 1
    _seen[sig] = count
    if count <= _KEEP_PER_SIGNATURE:
        folder = os.path.join(FINDINGS, target, sig.replace("@", "__").replace(":", "."))
        os.makedirs(folder, exist_ok=True)
        digest = hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(folder, f"input-{digest}"), "wb") as handle:
            handle.write(data)
        with open(os.path.join(folder, f"input-{digest}.txt"), "w") as handle:
            handle.write("".join(traceback.format_exception(exc)))
        with open(os.path.join(FINDINGS, target, "summary.txt"), "a") as handle:
            handle.write(f"{sig}\t{len(data)} bytes\t{digest}\n")


class OracleMismatch(AssertionError):
    """Two ways of computing the same answer disagreed: a correctness finding. `oracle` names
    which comparison failed; it is the signature's location."""

    def __init__(self, oracle: str, detail: str) -> None:
        super().__init__(f"{oracle}: {detail}")
        self.oracle = oracle


def round_trip(contract, load_contract, input_error) -> None:
    """The oracle of normalising: `to_dict()` of a loaded contract, loaded again (as a mapping and
    as JSON bytes), loads without error and gives the same `to_dict()`. (The target passes its
    instrumented `load_contract` and `InputError`: this harness module is not instrumented.)"""
    import msgspec

    normal = contract.to_dict()
    for again in (normal, msgspec.json.encode(normal)):
        try:
            reloaded = load_contract(again)
        except input_error as exc:
            raise OracleMismatch("round-trip", f"the normalised contract does not load again: {exc}") from None
        if reloaded.to_dict() != normal:
            raise OracleMismatch("round-trip", "normalising twice changed the contract")
