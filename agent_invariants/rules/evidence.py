"""What completion_requires_outcome and confidence_requires_outcome share: which observed outcomes
prove the work done (a satisfied verdict from an allowed evidence class, and for the first kind a
matching outcome id), whether one has been seen yet, and how messages name such an outcome.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.events import Event, EvidenceClass
from agent_invariants.globs import compile_glob
from agent_invariants.rules.base import Rule, RuleConfig

__all__ = ("DEFAULT_EVIDENCE_CLASSES", "EvidenceClasses", "EvidenceRule")

DEFAULT_EVIDENCE_CLASSES = ("externally_observed", "configured_verifier")

EvidenceClasses = Annotated[list[EvidenceClass], Meta(min_length=1, max_length=4)]
"""The type of an `evidence_classes` option."""


class EvidenceRule(Rule):
    """Base of the kinds whose claims need an earlier qualifying outcome: routes `outcome.observed`
    events to `_outcome`, which sets `proven` once one qualifies."""

    def __init__(self, config: RuleConfig, evidence_classes: Sequence[str] | UnsetType,
                 outcome_id: str | UnsetType = UNSET) -> None:
        super().__init__(config)
        self.evidence_classes = list(DEFAULT_EVIDENCE_CLASSES if evidence_classes is UNSET else evidence_classes)
        self._classes = frozenset(self.evidence_classes)
        self._outcome_id = None if outcome_id is UNSET else compile_glob(outcome_id)
        self.proven = False
        # how messages say that no qualifying outcome came first
        wanted = [] if outcome_id is UNSET else [f"outcome_id {outcome_id}"]
        wanted.append(f"evidence_class {' or '.join(self.evidence_classes)}")
        self.missing = f"no earlier satisfied outcome.observed ({', '.join(wanted)})"

    def _outcome(self, event: Event, index: int) -> None:
        if (not self.proven and event.verdict == "satisfied" and event.evidence_class in self._classes
                and (self._outcome_id is None
                     or event.outcome_id is not UNSET and self._outcome_id(event.outcome_id))):
            self.proven = True
