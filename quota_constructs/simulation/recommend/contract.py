"""What a recommendation must keep of each share's agreement: the lines today's declaration
keeps, held as constraints of the search, not as targets to trade against each other.

Each share's agreement is a contract (DESIGN §11). Recommend never gives any line of it up
silently:

- **A declared interruption budget** (``ShareAgreement(interruption_budget=N)``): no
  recommendation fails more of the share's jobs by their preemption budget than today's
  declaration does (the simulator's *jobs lost to the interruption budget*: a job preempted
  more often than its ``preemption_retries``, which ``ShareClient`` sets from the budget), nor
  preempts more of its jobs more than N times (a job submitted without a retry limit is
  requeued, not failed, but its agreement was broken all the same). Today's figures, from
  replaying today's declaration on the searched history, are the bound; when today's
  declaration cannot be replayed (a job could never start there), the bound is the
  agreement's own word: none.
- **A target today's declaration meets** (``target_wait_p95``, ``max_budget_failures``, or the
  same given with ``--target``): it stays met.

``max_budget_failures`` is a target, not a budget: where today fails more jobs than it allows,
recommend searches for fewer; it never lets a recommendation fail more of a share's jobs than
today's declaration does (the declared budget bounds that, whatever the target says), and a
share that declares no interruption budget is held only to its targets.

A user may trade a share's lines for the others' targets (``recommend(allow_trades=[share])``,
``--allow-trade SHARE``; ``"*"`` for every share): the search then treats that share's lines as
it treats any target, and the advice names every line it gives up (:class:`Trade`: which
share, which line, before and after).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ...model import QuotaConfigError, QuotaShareSpec
from ..durations import human_duration
from ..targets import ServiceTarget
from .tasks import Budgets, Scores, ShareScore, meets

EVERY_SHARE = "*"
"""``allow_trades`` entry naming every share."""

BUDGET_FAILURES, OVER_BUDGET, WAIT = "budget_failures", "over_budget", "wait_p95"
MEASURES = {
    BUDGET_FAILURES: "jobs lost to the interruption budget",
    OVER_BUDGET: "jobs preempted more often than the budget allows",
    WAIT: "wait p95",
}


@dataclass(frozen=True, slots=True)
class Bound:
    """One line of a share's agreement that a recommendation keeps: ``measure`` of the share's
    replay at most ``limit``."""

    share: str
    line: str
    """The agreement's line, as declared: ``interruption_budget=0``, ``target_wait_p95=30 min``."""
    measure: str
    """:data:`BUDGET_FAILURES`, :data:`OVER_BUDGET` or :data:`WAIT`."""
    limit: float

    def value(self, score: ShareScore | None) -> float:
        """The measure in ``score`` (infinite for no replay: the allocation strands jobs)."""
        if score is None:
            return math.inf
        if self.measure == WAIT:
            return 0.0 if score.wait_p95 is None else score.wait_p95
        return float(getattr(score, self.measure))

    def kept(self, score: ShareScore | None) -> bool:
        return self.value(score) <= self.limit

    def shown(self, value: float) -> str:
        if math.isinf(value):
            return "no replay" if self.measure != WAIT else "never starts"
        if self.measure == WAIT:
            return human_duration(value)
        return f"{int(value):,}"


@dataclass(frozen=True, slots=True)
class Trade:
    """A line of a share's agreement a recommendation gives up, with the figure today's
    declaration gives and the recommended one."""

    share: str
    line: str
    measure: str
    today: str
    recommended: str
    allowed: bool
    """True when the user opted in to trading this share (``allow_trades``)."""

    def describe(self) -> str:
        why = "traded as allowed" if self.allowed else "NOT allowed"
        return (f"{self.share}: {self.line}: {MEASURES[self.measure]} {self.today} → "
                f"{self.recommended} ({why})")

    def as_json(self) -> dict[str, object]:
        return {"share": self.share, "line": self.line, "measure": MEASURES[self.measure],
                "today": self.today, "recommended": self.recommended, "allowed": self.allowed}


@dataclass(frozen=True)
class Contract:
    """Every share's lines a recommendation keeps (see the module docs), and the shares the
    user lets the search trade."""

    bounds: tuple[Bound, ...]
    traded: frozenset[str]

    @classmethod
    def of(
        cls, today: Sequence[QuotaShareSpec], goals: Mapping[str, ServiceTarget],
        today_scores: Scores, replayed: bool, traded: Collection[str],
    ) -> Contract:
        """The bounds today's declaration sets (``today_scores``: its replay, when
        ``replayed``)."""
        bounds: list[Bound] = []
        for spec in today:
            agreement = spec.agreement
            budget = None if agreement is None else agreement.interruption_budget
            score = today_scores.get(spec.name)
            if budget is not None:
                line = f"interruption_budget={budget}"
                bounds += [Bound(spec.name, line, BUDGET_FAILURES,
                                 score.budget_failures if score else 0),
                           Bound(spec.name, line, OVER_BUDGET, score.over_budget if score else 0)]
            goal = goals.get(spec.name)
            if goal is None or not replayed or not meets(score, goal.wait_p95,
                                                         goal.max_budget_failures):
                continue
            if goal.wait_p95 is not None:
                bounds.append(Bound(spec.name,
                                    f"target_wait_p95={human_duration(goal.wait_p95)}", WAIT,
                                    goal.wait_p95))
            if goal.max_budget_failures is not None:
                bounds.append(Bound(spec.name, f"max_budget_failures={goal.max_budget_failures}",
                                    BUDGET_FAILURES, goal.max_budget_failures))
        names = {spec.name for spec in today}
        every = EVERY_SHARE in traded
        return cls(tuple(bounds), frozenset(names if every else traded))

    def broken(self, scores: Scores) -> list[Bound]:
        """The bounds ``scores`` does not keep, leaving out those of the traded shares."""
        return [b for b in self.bounds
                if b.share not in self.traded and not b.kept(scores.get(b.share))]

    def trades(self, today: Scores, recommended: Scores) -> list[Trade]:
        """Every line ``recommended`` gives up (traded shares' and, where nothing kept them,
        the others'), with today's figure beside it."""
        return [
            Trade(b.share, b.line, b.measure, b.shown(b.value(today.get(b.share))),
                  b.shown(b.value(recommended.get(b.share))), b.share in self.traded)
            for b in self.bounds if not b.kept(recommended.get(b.share))
        ]


def budgets_of(today: Sequence[QuotaShareSpec]) -> Budgets:
    """Per share (index), its declared interruption budget (None: none declared)."""
    return tuple(None if spec.agreement is None else spec.agreement.interruption_budget
                 for spec in today)


def check_trades(today: Sequence[QuotaShareSpec], allow_trades: Collection[str]) -> None:
    """Refuse an ``allow_trades`` entry naming no declared share (QuotaConfigError)."""
    names = {spec.name for spec in today}
    for name in allow_trades:
        if name != EVERY_SHARE and name not in names:
            raise QuotaConfigError("recommend", "allow_trades", name,
                                   f"a declared share ({', '.join(sorted(names))}) or "
                                   f"{EVERY_SHARE!r} for every share")
