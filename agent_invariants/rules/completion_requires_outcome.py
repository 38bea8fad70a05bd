"""completion_requires_outcome: "done" needs an earlier satisfied, trustworthy outcome."""
from typing import Annotated, Any, ClassVar

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.rules.base import Route, RuleConfig
from agent_invariants.rules.evidence import EvidenceClasses, EvidenceRule
from agent_invariants.rules.fields import Glob
from agent_invariants.rules.matchers import event_name

__all__ = ("CompletionRequiresOutcome", "CompletionRequiresOutcomeConfig")

DEFAULT_COMPLETION_TYPES = ("run.completed",)


class CompletionRequiresOutcomeConfig(RuleConfig, frozen=True, kw_only=True, tag="completion_requires_outcome"):
    """Options of a completion_requires_outcome rule."""

    completion_types: Annotated[list[Glob], Meta(min_length=1, max_length=100)] | UnsetType = UNSET
    """Event types that claim completion (default `["run.completed"]`)."""
    outcome_id: Glob | UnsetType = UNSET
    """If set, only outcomes whose `outcome_id` matches count as evidence."""
    evidence_classes: EvidenceClasses | UnsetType = UNSET
    """Evidence classes that count (default externally_observed, configured_verifier)."""


class CompletionRequiresOutcome(EvidenceRule):
    """Fails when the agent claims to be done before anything observed that it worked.

    ## What it checks
    A completion is an event with `"claims_completion": true` or whose type matches one of
    `completion_types` (`checked` counts them). Each needs an earlier event (strictly before it)
    of type exactly `outcome.observed` with `"verdict": "satisfied"`, an `evidence_class` in
    `evidence_classes` (an outcome without a class never counts) and, if the rule sets
    `outcome_id`, a matching `outcome_id`. Otherwise: a violation at the completion, naming it
    and what would have counted: `run.completed claimed completion with no earlier satisfied
    outcome.observed (evidence_class externally_observed or configured_verifier).`

    ## Why it matters
    "Done" from the agent itself is not evidence. A refund is done when the ledger shows it.

    ## Failing trace
    With `{"id": "proof", "kind": "completion_requires_outcome"}`:
    ```jsonl
    {"seq": 1, "type": "outcome.observed", "verdict": "satisfied", "evidence_class": "self_attestation"}
    {"seq": 2, "type": "run.completed"}
    ```
    Violation at seq 2 (the agent vouched for itself): `run.completed claimed completion with no
    earlier satisfied outcome.observed (evidence_class externally_observed or configured_verifier).`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "outcome.observed", "verdict": "satisfied", "evidence_class": "externally_observed"}
    {"seq": 2, "type": "run.completed"}
    ```

    ## Options
    - `completion_types` (list of 1..100 globs, default `["run.completed"]`).
    - `outcome_id` (glob): which outcomes count.
    - `evidence_classes` (1..4 of externally_observed, configured_verifier, manual_attestation,
      self_attestation; default the first two).

    ## Known limits
    A satisfied outcome keeps counting even if a later outcome for the same id says `violated`.
    `run.completed` with `"claims_completion": false` is still a completion (its type matches).
    """

    kind: ClassVar[str] = "completion_requires_outcome"
    config_type: ClassVar[type[RuleConfig]] = CompletionRequiresOutcomeConfig
    tags: ClassVar[tuple[str, ...]] = ("completion", "evidence")
    reason: ClassVar[str] = "missing"

    def __init__(self, config: CompletionRequiresOutcomeConfig) -> None:
        super().__init__(config, config.evidence_classes, config.outcome_id)
        types = DEFAULT_COMPLETION_TYPES if config.completion_types is UNSET else config.completion_types
        self._completion_types = [compile_glob(pattern) for pattern in types]
        self._evidence: dict[str, Any] = {"evidence_classes": self.evidence_classes}
        if config.outcome_id is not UNSET:
            self._evidence = {"outcome_id": config.outcome_id, **self._evidence}

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()   # the tool plays no part

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        completion = claims is True or any(matches(event_type) for matches in self._completion_types)
        if event_type == "outcome.observed":
            # both: judge the completion first, since only strictly earlier outcomes count
            return (self._completion, self._outcome) if completion else self._outcome
        return self._completion if completion else None

    def _completion(self, event: Event, index: int) -> None:
        self.checked += 1
        if not self.proven and self.note_violation():
            self.keep(f"{event_name(event.type, event.tool)} claimed completion with {self.missing}.",
                      self._evidence, event.seq, index)
