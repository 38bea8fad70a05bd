"""confidence_requires_outcome: a confident "done" needs earlier outcome evidence."""
from typing import Annotated, ClassVar

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number, json_number
from agent_invariants.events import Event
from agent_invariants.rules.base import Route, RuleConfig
from agent_invariants.rules.evidence import EvidenceClasses, EvidenceRule
from agent_invariants.rules.matchers import event_name

__all__ = ("ConfidenceRequiresOutcome", "ConfidenceRequiresOutcomeConfig")


class ConfidenceRequiresOutcomeConfig(RuleConfig, frozen=True, kw_only=True, tag="confidence_requires_outcome"):
    """Options of a confidence_requires_outcome rule."""

    threshold: Annotated[float, Meta(ge=0, le=1)]
    """Claims with `confidence` at or above this need evidence."""
    evidence_classes: EvidenceClasses | UnsetType = UNSET
    """Evidence classes that count (default externally_observed, configured_verifier)."""


class ConfidenceRequiresOutcome(EvidenceRule):
    """Fails when the agent is confident it is done but nothing observed the outcome.

    ## What it checks
    Looks at events with `"claims_completion": true` and a `confidence` at or above `threshold`
    (`checked` counts them). Each needs an earlier `outcome.observed` event with
    `"verdict": "satisfied"` and an `evidence_class` in `evidence_classes`, whatever its
    `outcome_id`. Otherwise: a violation at the claim, `agent.message claimed completion with
    confidence 0.97 (threshold 0.9) and no earlier satisfied outcome.observed (evidence_class
    externally_observed or configured_verifier).`

    ## Why it matters
    High confidence reads as "verified" to whoever acts on it. It should only be high when
    something outside the agent confirmed the result.

    ## Failing trace
    With `{"id": "calibrated", "kind": "confidence_requires_outcome", "threshold": 0.9}`:
    ```jsonl
    {"seq": 1, "type": "agent.message", "claims_completion": true, "confidence": 0.95}
    ```
    Violation at seq 1: `agent.message claimed completion with confidence 0.95 (threshold 0.9) and
    no earlier satisfied outcome.observed (evidence_class externally_observed or configured_verifier).`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "outcome.observed", "verdict": "satisfied", "evidence_class": "configured_verifier"}
    {"seq": 2, "type": "agent.message", "claims_completion": true, "confidence": 0.95}
    ```

    ## Options
    - `threshold` (number 0..1, required): inclusive.
    - `evidence_classes` (1..4 evidence classes, default externally_observed, configured_verifier).

    ## Known limits
    Claims below the threshold or without a `confidence` are not checked. An earlier satisfied
    outcome keeps counting after a later `violated` one.
    """

    kind: ClassVar[str] = "confidence_requires_outcome"
    config_type: ClassVar[type[RuleConfig]] = ConfidenceRequiresOutcomeConfig
    tags: ClassVar[tuple[str, ...]] = ("completion", "evidence")
    reason: ClassVar[str] = "missing"
    checked_nothing_is_normal = True   # checked counts the confident claims it judges

    def __init__(self, config: ConfidenceRequiresOutcomeConfig) -> None:
        super().__init__(config, config.evidence_classes)
        self._threshold = config.threshold

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()   # the tool plays no part

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "outcome.observed":
            # both: judge the claim first, since only strictly earlier outcomes count
            return (self._claim, self._outcome) if claims is True else self._outcome
        return self._claim if claims is True else None

    def _claim(self, event: Event, index: int) -> None:
        confidence = event.confidence
        if confidence is UNSET or confidence < self._threshold:
            return
        self.checked += 1
        if not self.proven and self.note_violation():
            self.keep(
                f"{event_name(event.type, event.tool)} claimed completion with confidence {js_number(confidence)} "
                f"(threshold {js_number(self._threshold)}) and {self.missing}.",
                {"confidence": json_number(confidence), "threshold": json_number(self._threshold),
                 "evidence_classes": self.evidence_classes},
                event.seq, index)
