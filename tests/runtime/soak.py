"""Random sequences of deployments against the fake Batch, with faults and repeated deliveries.

Each sequence is seeded: two or three ``Custom::BatchQuotaShare`` resources on one job queue
(beside a share made by hand) live through creates, updates, renames, adoptions (of a share
made by hand, and moves of a declaration to another construct path), deletes and rollbacks,
while jobs run, wait and finish between deployments. Every AWS Batch call may be throttled or
answered with a 5xx (before it took effect or after) or time out after taking effect; a
request may be delivered twice (the first answer lost, or the first Lambda killed mid-way).
After every deployment the queue is checked against what the stack declares:

- a deployment that no guard could refuse must succeed (and every rollback must);
- no share lost (declared but gone), orphaned (on the queue, nobody's), duplicated (two
  resources on one share), or disabled while declared enabled;
- no job terminated or preempted unless the share opted in.

What "should succeed" means is decided here from the declarations and the jobs alone (a
deployment that lowers a limit or borrow ceiling while the share holds jobs, or deletes a
share with active jobs, may be refused; anything else may not), independently of the runtime.

    python -m tests.runtime.soak --sequences 1000 --seed 0
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import math
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from quota_constructs.model import SharingStrategy
from quota_constructs.runtime.adoption import CAPACITY_FIELDS
from quota_constructs.runtime.batch_gateway import BatchConnection
from quota_constructs.runtime.ownership import (
    ADOPTING_TAG_KEY,
    LIFECYCLE_TAG_KEY,
    OWNER_TAG_KEY,
    adopting_markers,
    owner_marker,
)
from quota_constructs.runtime.quota_share_handler import EntryPoints
from quota_constructs.runtime.retry import RetryPolicy
from quota_constructs.runtime.share_request import GuardOptIns
from quota_constructs.runtime.structured_log import logger
from quota_constructs.wire.lifecycle_record import lifecycle_with_restore_pending, restore_pending

from .cloudformation import STACK_ID, Outcome, StackResource, share_properties
from .declarations import G5, G5_2X, share_spec
from .fake_batch import FakeBatch, FakeShare
from .in_process_batch import InProcessBatchClient, LambdaKilled

QUEUE = "training"
ENVIRONMENT = {G5: 16, G5_2X: 8}
HAND_MADE = "legacy"
MUTATIONS = ("CreateQuotaShare", "UpdateQuotaShare", "DeleteQuotaShare", "TagResource",
             "UntagResource")
ACTIVE = ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING")
DISPATCHED = ("SCHEDULED", "STARTING", "RUNNING")
READ_TIMEOUT = 10.0


@dataclass(frozen=True)
class FaultRates:
    """Probability per call of each injected answer."""

    mutation_throttled: float = 0.04
    mutation_5xx_before: float = 0.03
    mutation_5xx_after_applied: float = 0.06
    mutation_timeout_after_applied: float = 0.03
    read_throttled: float = 0.03
    read_5xx: float = 0.02
    redelivery: float = 0.15
    """Per request: on_event delivered twice (half of them after killing the first mid-way)."""
    repeated_poll: float = 0.1
    denied_during_delete: float = 0.04
    """Per call while a resource is removed from the stack: the call is denied (a 403
    AccessDeniedException or a ClientException saying the caller is not authorized), at most
    once per deletion."""


@dataclass(frozen=True)
class Declared:
    """What the stack declares for one share (the soak's own record, not the runtime's)."""

    name: str
    limits: Mapping[str, int]
    strategy: SharingStrategy
    borrow: int | None
    preemption: bool = False
    enabled: bool = True
    team: str = "a"
    adopt_existing: bool = False
    allow_preemption_on_shrink: bool = False
    terminate_active_jobs_on_delete: bool = False
    marked: frozenset[str] = frozenset()
    """For a share made by hand: the configuration fields an earlier give-back held back,
    which its lifecycle tag marks (the one tag it carries that is not its own)."""

    def properties(self) -> dict[str, Any]:
        spec = share_spec(self.name, dict(self.limits), self.strategy, self.borrow,
                          in_share_preemption=self.preemption, enabled=self.enabled,
                          tags={"team": self.team})
        return share_properties(
            spec, QUEUE, adopt_existing=self.adopt_existing,
            allow_preemption_on_shrink=self.allow_preemption_on_shrink,
            terminate_active_jobs_on_delete=self.terminate_active_jobs_on_delete,
        )

    def ceiling(self, unit: str) -> float:
        own = self.limits.get(unit, 0)
        if self.strategy is not SharingStrategy.LEND_AND_BORROW:
            return own
        if self.borrow is None or self.borrow == -1:
            return math.inf
        return own * (1 + self.borrow / 100)

    def lowers(self, other: Declared) -> bool:
        """True when ``other`` lowers a limit or borrow ceiling of this declaration."""
        units = set(self.limits) | set(other.limits)
        return any(
            other.limits.get(u, 0) < self.limits.get(u, 0) or other.ceiling(u) < self.ceiling(u)
            for u in units
        )

    def matches(self, share: FakeShare) -> bool:
        borrow = None
        if self.strategy is SharingStrategy.LEND_AND_BORROW:
            borrow = -1 if self.borrow is None else self.borrow
        return (
            share.limits == dict(self.limits)
            and share.strategy == self.strategy.value
            and share.borrow_limit == borrow
            and share.in_share_preemption == ("ENABLED" if self.preemption else "DISABLED")
            and share.state == ("ENABLED" if self.enabled else "DISABLED")
            and share.tags.get("team") == self.team
        )


@dataclass
class Counts:
    sequences: int = 0
    deployments: int = 0
    should_succeed: int = 0
    failed_that_should_succeed: int = 0
    refused_as_expected: int = 0
    rollbacks: int = 0
    failed_rollbacks: int = 0
    lost: int = 0
    orphaned: int = 0
    duplicated: int = 0
    left_disabled: int = 0
    drifted: int = 0
    stray_markers: int = 0
    lifecycle_records_lost: int = 0
    operator_drains: int = 0
    given_back_partly: int = 0
    """Give-backs that held part of a share back (restoring it would have preempted jobs)."""
    jobs_harmed: int = 0
    guards_bypassed: int = 0
    faults_injected: int = 0
    redeliveries: int = 0
    denials: int = 0
    killed_mid_request: int = 0
    problems: list[str] = field(default_factory=list)
    actions: Counter[str] = field(default_factory=Counter)
    """Deployments by kind and outcome ("update ok", "adopt refused", ...)."""

    VIOLATIONS = ("failed_that_should_succeed", "failed_rollbacks", "lost", "orphaned",
                  "duplicated", "left_disabled", "drifted", "stray_markers",
                  "lifecycle_records_lost", "jobs_harmed", "guards_bypassed")

    @property
    def violations(self) -> int:
        return sum(getattr(self, name) for name in self.VIOLATIONS)

    def add(self, other: Counts) -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)
        self.problems.extend(other.problems)
        self.actions.update(other.actions)


class Faults:
    """Schedules the fake's faults before each call, at :class:`FaultRates`."""

    def __init__(self, state: FakeBatch, rng: random.Random, rates: FaultRates,
                 counts: Counts) -> None:
        self.state, self.rng, self.rates, self.counts = state, rng, rates, counts
        self.deny_rate = 0.0
        self.denied = False

    def before_call(self, operation: str) -> None:
        if self.deny_rate and not self.denied and self.rng.random() < self.deny_rate:
            self.denied = True
            self.counts.denials += 1
            self.state.deny_next(operation, as_client_exception=self.rng.random() < 0.5)
            return
        r, roll = self.rates, self.rng.random()
        if operation in MUTATIONS:
            edges = [
                (r.mutation_throttled, lambda: self.state.fail_next(operation)),
                (r.mutation_5xx_before, lambda: self.state.fail_next(
                    operation, code="ServerException", status=500, message="Internal error")),
                (r.mutation_5xx_after_applied, lambda: self.state.fail_after_next(operation)),
                (r.mutation_timeout_after_applied,
                 lambda: self.state.slow_next(operation, READ_TIMEOUT + 1)),
            ]
        else:
            edges = [
                (r.read_throttled, lambda: self.state.fail_next(operation)),
                (r.read_5xx, lambda: self.state.fail_next(
                    operation, code="ServiceUnavailableException", status=503, message="Busy")),
            ]
        for rate, inject in edges:
            if roll < rate:
                self.counts.faults_injected += 1
                inject()
                return
            roll -= rate


class Deliveries:
    """The Provider framework around the handler: some requests delivered twice."""

    def __init__(self, client: InProcessBatchClient, rng: random.Random, rates: FaultRates,
                 counts: Counts) -> None:
        self.client, self.rng, self.rates, self.counts = client, rng, rates, counts
        # The runtime reaches this sequence's in-process Batch, with backoff not slept.
        self.runtime = EntryPoints(BatchConnection(
            policy=RetryPolicy(sleep=lambda _: None, jitter=lambda: 1.0),
            make_client=lambda _: client,
        ))

    def on_event(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        if self.rng.random() < self.rates.redelivery:
            self.counts.redeliveries += 1
            if self.rng.random() < 0.5:
                self.client.kill_after = self.rng.randint(1, 8)
            try:
                self.runtime.on_event(copy.deepcopy(event), context)
            except LambdaKilled:
                self.counts.killed_mid_request += 1
            except Exception:
                pass  # the first answer is lost either way
            finally:
                self.client.kill_after = None
        return self.runtime.on_event(event, context)

    def is_complete(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        if self.rng.random() < self.rates.repeated_poll:
            with contextlib.suppress(Exception):
                self.runtime.is_complete(copy.deepcopy(event), context)
        return self.runtime.is_complete(event, context)


@dataclass
class Slot:
    resource: StackResource
    declared: Declared | None = None
    origin: Declared | None = None
    """The share made by hand this slot's share was adopted from: it existed before the
    stack, so removing the slot gives it back as it was (adoption is import)."""

    @property
    def arn(self) -> str | None:
        return self.resource.physical_id if self.declared is not None else None


@dataclass
class Kept:
    """A share a refused delete left in place on purpose (its jobs still active)."""

    arn: str
    declared: Declared


class Sequence:
    def __init__(self, seed: str, rates: FaultRates, steps: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.steps = steps
        self.counts = Counts(sequences=1)
        self.state = FakeBatch(transition_polls=self.rng.randint(1, 3),
                               unseen_reads=self.rng.choice((0, 0, 1, 2, 4)))
        self.queue = self.state.add_queue(QUEUE, ENVIRONMENT)
        self.client = InProcessBatchClient(self.state, READ_TIMEOUT)
        self.faults = Faults(self.state, self.rng, rates, self.counts)
        self.client.before_call = self.faults.before_call
        handler = Deliveries(self.client, self.rng, rates, self.counts)
        self.slots = [
            Slot(StackResource(f"Share{index}", handler=handler, max_polls=40))
            for index in range(self.rng.choice((2, 3)))
        ]
        self.kept: list[Kept] = []
        self.hand_made: Declared | None = Declared(HAND_MADE, {G5: 2}, SharingStrategy.LEND,
                                                   None, team="legacy")
        self._make_by_hand(self.hand_made)
        self._names = (f"team-{n}" for n in range(1000))
        self.step_name = ""
        self.action = ""
        self._reported: set[tuple[str, str]] = set()

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> Counts:
        for number in range(self.steps):
            self._jobs_move()
            if self.hand_made is None and self.rng.random() < 0.15:
                # Someone makes another share by hand, which the stack may later adopt.
                self.hand_made = replace(self._random_declaration(next(self._names)),
                                         strategy=SharingStrategy.LEND, borrow=None,
                                         preemption=False, enabled=True, team="legacy")
                self._make_by_hand(self.hand_made)
            choices = ["create"] * sum(1 for s in self.slots if s.declared is None)
            filled = [s for s in self.slots if s.declared is not None]
            choices += ["update", "update", "rename", "delete"] * len(filled)
            if filled and len(filled) < len(self.slots):
                choices += ["move"] * len(filled)
            action = self.rng.choice(choices)
            self.step_name = f"{self.seed} step {number} {action}"
            self.harm_allowed: set[str] = set()
            terminated = len(self.state.terminated_jobs)
            preempted = len(self.state.preempted_jobs)
            self.action = action
            if action == "create":
                self._create(self.rng.choice([s for s in self.slots if s.declared is None]))
            else:
                slot = self.rng.choice(filled)
                getattr(self, f"_{action}")(slot)
            self.state.faults.clear()
            self.state.settle()
            self._check(terminated, preempted)
        return self.counts

    # -- deployments --------------------------------------------------------------------------

    def _create(self, slot: Slot) -> None:
        if self.hand_made is not None and self.rng.random() < 0.35:
            self._adopt(slot, self.hand_made)
            return
        declared = self._random_declaration(next(self._names))
        outcome = self._deploy(lambda: slot.resource.create(declared.properties()), True)
        if not outcome.ok:
            return
        if self.rng.random() < 0.15:
            # Another resource of the stack fails: CloudFormation rolls the create back.
            rollback = slot.resource.send(
                "Delete", declared.properties(), physical_id=outcome.physical_id
            )
            self._rollback_result(rollback)
            slot.resource.physical_id = None
            return
        slot.declared = declared

    def _adopt(self, slot: Slot, existing: Declared) -> None:
        self.action = "adopt"
        told = self.rng.random() < 0.85
        declared = replace(self._random_declaration(existing.name), adopt_existing=told)
        share = self.state.share(self.queue, existing.name)
        if share is None:
            self._problem("lost", f"{existing.name}, made by hand, is gone")
            self.hand_made = None
            return
        lowers = existing.lowers(declared) and not declared.allow_preemption_on_shrink
        may_refuse = lowers and self._holds_jobs(share)
        if declared.allow_preemption_on_shrink:
            self.harm_allowed.add(f"preempt:{existing.name}")
        before = (dict(share.tags), share.summary())
        outcome = self._deploy(
            lambda: slot.resource.create(declared.properties()), told and not may_refuse,
            must_fail=not told,
        )
        if outcome.ok and self.rng.random() < 0.15:
            # Another resource of the stack fails: the rollback gives the share back.
            rollback = slot.resource.send(
                "Delete", declared.properties(), physical_id=outcome.physical_id
            )
            self._rollback_result(rollback)
            slot.resource.physical_id = None
            self._given_back(outcome.physical_id, existing, declared, before)
            return
        if outcome.ok:
            slot.declared, slot.origin = declared, existing
            self.hand_made = None
            return
        after = self.state.share(self.queue, existing.name)
        if after is None:
            self._problem("lost", f"a refused adoption removed {existing.name}")
        elif (dict(after.tags), after.summary()) != before:
            self._problem("drifted", f"a refused adoption changed {existing.name}: {after}")

    def _update(self, slot: Slot) -> None:
        old = slot.declared
        assert old is not None and slot.arn is not None
        new = self._changed(old)
        share = self.state.shares.get(slot.arn)
        may_refuse = (
            old.lowers(new) and not new.allow_preemption_on_shrink
            and share is not None and self._holds_jobs(share)
        )
        if new.allow_preemption_on_shrink:
            self.harm_allowed.add(f"preempt:{old.name}")
        later_failure = self.rng.random() < 0.2
        outcome = self._deploy(
            lambda: slot.resource.update(new.properties(), later_failure=later_failure),
            not may_refuse,
        )
        if outcome.rollback is not None:
            self._rollback_result(outcome.rollback)
        if outcome.ok and not later_failure:
            slot.declared = new

    def _rename(self, slot: Slot) -> None:
        old = slot.declared
        assert old is not None and slot.arn is not None
        old_arn = slot.arn
        new = replace(old, name=next(self._names), adopt_existing=False)
        later_failure = self.rng.random() < 0.15
        if old.terminate_active_jobs_on_delete:
            self.harm_allowed.add(f"terminate:{old.name}")
        share = self.state.shares.get(old_arn)
        old_busy = share is not None and self._has_active_jobs(share)
        outcome = self._deploy(
            lambda: slot.resource.update(new.properties(), later_failure=later_failure), True
        )
        if outcome.rollback is not None:
            self._rollback_result(outcome.rollback)
            if outcome.cleanup is not None:
                # The rollback's cleanup deletes the replacement the failed update made.
                self._rollback_result(outcome.cleanup)
            return
        if not outcome.ok:
            return
        slot.declared = new
        cleanup = outcome.cleanup
        assert cleanup is not None
        origin, slot.origin = slot.origin, None
        self._delete_result(cleanup, old, old_arn, old_busy, origin)

    def _move(self, slot: Slot) -> None:
        """The same declaration moves to another construct path: the new resource adopts the
        share, then CloudFormation deletes the old resource (or rolls the move back)."""
        old = slot.declared
        assert old is not None and slot.arn is not None
        arn = slot.arn
        target = self.rng.choice([s for s in self.slots if s.declared is None])
        moved = replace(old, adopt_existing=True)
        outcome = self._deploy(lambda: target.resource.create(moved.properties()), True)
        if not outcome.ok:
            return
        if self.rng.random() < 0.2:
            # Another resource fails: the rollback deletes the new resource, which hands the
            # share back to the old one.
            self._rollback_result(target.resource.send(
                "Delete", moved.properties(), physical_id=outcome.physical_id))
            target.resource.physical_id = target.resource.properties = None
            return
        target.declared, target.origin, slot.origin = moved, slot.origin, None
        self.counts.deployments += 1
        cleanup = slot.resource.delete()
        self.counts.should_succeed += 1
        if not cleanup.ok:
            self._problem("failed_that_should_succeed", cleanup.reason)
        slot.declared = None
        slot.resource.physical_id = slot.resource.properties = None
        if arn not in self.state.shares:
            self._problem("lost", f"the moved share {old.name} was deleted", arn)

    def _delete(self, slot: Slot) -> None:
        declared, arn = slot.declared, slot.arn
        assert declared is not None and arn is not None
        share = self.state.shares.get(arn)
        busy = share is not None and self._has_active_jobs(share)
        if declared.terminate_active_jobs_on_delete:
            self.harm_allowed.add(f"terminate:{declared.name}")
        if share is not None and share.state == "ENABLED" and self.rng.random() < 0.15:
            # An operator disables the share to drain it before removing it from the stack: a
            # refused delete must leave it disabled.
            self.counts.operator_drains += 1
            share.state = "DISABLED"
            declared = replace(declared, enabled=False)
        self.counts.deployments += 1
        if slot.origin is None:
            # A denied call fails the delete; the share must stay as it was before the delete.
            self.faults.deny_rate = self.faults.rates.denied_during_delete
            self.faults.denied = False
        try:
            outcome = slot.resource.delete()
        finally:
            self.faults.deny_rate = 0.0
        self.counts.actions[f"delete {'ok' if outcome.ok else 'refused'}"] += 1
        slot.declared, slot.resource.physical_id = None, None
        slot.resource.properties = None
        origin, slot.origin = slot.origin, None
        if self.faults.denied and not outcome.ok:
            self.counts.refused_as_expected += 1
            after = self.state.shares.get(arn)
            if after is not None and after.status != "DELETING":
                # Denied before AWS Batch was asked to delete it: it stays as it was. (Denied
                # after that, the deletion the guard allowed goes on in AWS Batch.)
                self.kept.append(Kept(arn, declared))
            return
        self._delete_result(outcome, declared, arn, busy, origin)

    def _delete_result(self, outcome: Outcome, declared: Declared, arn: str,
                       busy: bool, origin: Declared | None = None) -> None:
        """A delete that removes the resource from the stack: refused only for active jobs;
        a share the stack adopted is given back as it was, whatever its jobs."""
        if origin is not None:
            self.counts.should_succeed += 1
            if not outcome.ok:
                self._problem("failed_that_should_succeed", outcome.reason)
            self._given_back(arn, origin, declared, None)
            return
        may_refuse = busy and not declared.terminate_active_jobs_on_delete
        if not may_refuse:
            self.counts.should_succeed += 1
            if not outcome.ok:
                self._problem("failed_that_should_succeed", outcome.reason)
        elif outcome.ok and busy:
            self._problem("guards_bypassed", "a share with active jobs was deleted")
        if not outcome.ok:
            # CloudFormation forgets the resource; the share stays as it was, with its jobs.
            self.counts.refused_as_expected += may_refuse
            self.kept.append(Kept(arn, declared))

    def _given_back(self, arn: str, origin: Declared, declared: Declared,
                    before: tuple[dict[str, str], dict[str, Any]] | None) -> None:
        """The share made by hand is back as it was: its own tags only, its configuration and
        state. A lower capacity is held back only while giving it back would preempt jobs; the
        share then carries the mark saying what (its lifecycle record's ``restore_pending``,
        the only tag not its own), and every part not marked is back."""
        share = self.state.shares.get(arn)
        if share is None:
            self._problem("lost", f"{origin.name}, adopted, was deleted instead of given back")
            return
        pending = frozenset(restore_pending(share.tags))
        held_now = pending - origin.marked
        may_hold_back = declared.lowers(origin) and self._holds_jobs(share)
        if held_now and (not may_hold_back or held_now - set(CAPACITY_FIELDS)):
            self._problem("drifted", f"{origin.name} held back {sorted(held_now)} needlessly",
                          arn)
        if pending < origin.marked:
            self._problem("stray_markers", f"{origin.name} lost its mark {origin.marked}", arn)
        mark = {LIFECYCLE_TAG_KEY: lifecycle_with_restore_pending(None, pending)} if pending \
            else {}
        if share.tags != {"team": origin.team, **mark}:
            self._problem("stray_markers", f"{origin.name} given back with {share.tags}", arn)
        if held_now:
            # What is held back stays as the adoption left it; everything else is back.
            self.counts.given_back_partly += 1
            origin = replace(origin, marked=pending)
            if "capacityLimits" in held_now:
                origin = replace(origin, limits=dict(share.limits))
            if "resourceSharingConfiguration" in held_now:
                origin = replace(origin, strategy=SharingStrategy(share.strategy),
                                 borrow=share.borrow_limit
                                 if share.strategy == "LEND_AND_BORROW" else None)
        if not origin.matches(share):
            self._problem("drifted", f"{origin.name} given back as {share.summary()}", arn)
        if before is not None and not held_now and (
            dict(share.tags), share.summary()) != before:
            self._problem("drifted", f"{origin.name} given back as {share.summary()}", arn)
        if self.hand_made is None:
            self.hand_made = origin
        else:
            self.kept.append(Kept(arn, origin))

    def _deploy(self, run: Any, should_succeed: bool, must_fail: bool = False) -> Outcome:
        self.counts.deployments += 1
        outcome: Outcome = run()
        self.counts.actions[f"{self.action} {'ok' if outcome.ok else 'refused'}"] += 1
        if should_succeed:
            self.counts.should_succeed += 1
            if not outcome.ok:
                self._problem("failed_that_should_succeed", outcome.reason)
        elif must_fail and outcome.ok:
            self._problem("guards_bypassed", "a share made by hand was taken over unasked")
        elif not outcome.ok:
            self.counts.refused_as_expected += 1
        return outcome

    def _rollback_result(self, rollback: Outcome) -> None:
        self.counts.rollbacks += 1
        if not rollback.ok:
            self._problem("failed_rollbacks", rollback.reason)

    # -- declarations and jobs ----------------------------------------------------------------

    def _random_declaration(self, name: str) -> Declared:
        rng = self.rng
        limits = {G5: rng.randint(1, 5)}
        if rng.random() < 0.3:
            limits[G5_2X] = rng.randint(1, 3)
        strategy = rng.choice(list(SharingStrategy))
        borrow = rng.choice((None, 0, 50, 200)) if strategy is SharingStrategy.LEND_AND_BORROW \
            else None
        return Declared(
            name=name, limits=limits, strategy=strategy, borrow=borrow,
            preemption=rng.random() < 0.3, enabled=rng.random() < 0.9,
            team=rng.choice("abc"),
            allow_preemption_on_shrink=rng.random() < 0.15,
            terminate_active_jobs_on_delete=rng.random() < 0.2,
        )

    def _changed(self, old: Declared) -> Declared:
        fresh = self._random_declaration(old.name)
        changes: dict[str, Any] = {}
        for key in self.rng.sample(["limits", "sharing", "preemption", "enabled", "team",
                                    "opt_ins"], self.rng.randint(1, 3)):
            if key == "sharing":
                changes.update(strategy=fresh.strategy, borrow=fresh.borrow)
            elif key == "opt_ins":
                changes.update(allow_preemption_on_shrink=fresh.allow_preemption_on_shrink,
                               terminate_active_jobs_on_delete=(
                                   fresh.terminate_active_jobs_on_delete))
            else:
                changes[key] = getattr(fresh, key)
        return replace(old, adopt_existing=False, **changes)

    def _make_by_hand(self, declared: Declared) -> None:
        self.state.handle("CreateQuotaShare", {
            "quotaShareName": declared.name, "jobQueue": self.queue,
            "capacityLimits": [{"capacityUnit": u, "maxCapacity": n}
                               for u, n in declared.limits.items()],
            "resourceSharingConfiguration": {"strategy": declared.strategy.value},
            "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
            "tags": {"team": declared.team},
        })
        self.state.settle()

    def _jobs_move(self) -> None:
        """Between deployments: jobs start, wait and finish on every share of the queue."""
        for share in self.state.shares_on(self.queue):
            roll = self.rng.random()
            jobs = [j for j in self.state.jobs if j.share_name == share.name
                    and j.status in ACTIVE]
            if roll < 0.3 and share.state == "ENABLED":
                unit = self.rng.choice(sorted(share.limits))
                used = sum(j.usage.get(unit, 0) for j in jobs if j.status in DISPATCHED)
                status = "RUNNING" if used + 1 <= share.limits[unit] else "RUNNABLE"
                self.state.add_job(share.arn, status, {unit: 1})
            elif roll < 0.45 and share.state == "ENABLED":
                unit = self.rng.choice(sorted(share.limits))
                self.state.add_job(share.arn, "RUNNABLE", {unit: 1})
            elif roll < 0.8:
                for job in jobs:
                    if self.rng.random() < 0.6:
                        job.status = "SUCCEEDED"

    def _holds_jobs(self, share: FakeShare) -> bool:
        return any(j.share_name == share.name and j.status in DISPATCHED for j in self.state.jobs)

    def _has_active_jobs(self, share: FakeShare) -> bool:
        return any(j.share_name == share.name and j.status in ACTIVE for j in self.state.jobs)

    # -- invariants ---------------------------------------------------------------------------

    def _check(self, terminated: int, preempted: int) -> None:
        on_queue = {share.arn: share for share in self.state.shares_on(self.queue)}
        accounted: dict[str, str] = {}
        for slot in self.slots:
            if slot.declared is None or slot.arn is None:
                continue
            arn, declared = slot.arn, slot.declared
            if arn in accounted:
                self._problem("duplicated", f"{slot.resource.logical_id} and {accounted[arn]}")
            accounted[arn] = slot.resource.logical_id
            share = on_queue.get(arn)
            if share is None:
                self._problem("lost", f"{slot.resource.logical_id}'s share {arn} is gone", arn)
                continue
            self._check_share(share, declared)
            recorded = GuardOptIns.from_tags(share.tags)
            wanted = GuardOptIns(
                adopt_existing=declared.adopt_existing,
                allow_preemption_on_shrink=declared.allow_preemption_on_shrink,
                terminate_active_jobs_on_delete=declared.terminate_active_jobs_on_delete,
            )
            if recorded != wanted or "disabled_for_delete" in share.tags.get(
                LIFECYCLE_TAG_KEY, ""
            ):
                self._problem("lifecycle_records_lost",
                              f"{share.name}: {share.tags.get(LIFECYCLE_TAG_KEY)} vs {wanted}",
                              share.arn)
            marker = owner_marker(STACK_ID, slot.resource.logical_id)
            if share.tags.get(OWNER_TAG_KEY, "").split("/")[0] != marker or (
                ADOPTING_TAG_KEY in share.tags or adopting_markers(share.tags)
            ):
                self._problem("stray_markers", f"{share.name}: {share.tags}", share.arn)
        others: list[tuple[str, Declared]] = [(k.arn, k.declared) for k in self.kept]
        if self.hand_made is not None:
            others.append((f"{self.queue}/quota-share/{self.hand_made.name}", self.hand_made))
        for arn, declared in others:
            if arn in accounted:
                continue  # a slot took it back (renamed back onto a kept share)
            accounted[arn] = "kept"
            share = on_queue.get(arn)
            if share is None:
                self._problem("lost", f"{declared.name}, left in place, is gone", arn)
            elif declared.enabled and share.state != "ENABLED":
                self._problem("left_disabled", f"{declared.name} (left in place)", arn)
            elif not declared.enabled and share.state != "DISABLED":
                self._problem("drifted", f"{declared.name} (left in place) was enabled", arn)
        self.kept = [k for k in self.kept if k.arn in on_queue and k.arn not in
                     {s.arn for s in self.slots}]
        for arn, share in on_queue.items():
            if arn not in accounted:
                self._problem("orphaned", f"{share.name} ({share.state}, {share.tags})", arn)
        for job_id in self.state.terminated_jobs[terminated:]:
            if f"terminate:{self.state.job(job_id).share_name}" not in self.harm_allowed:
                self._problem("jobs_harmed", f"{job_id} terminated")
        for job_id in self.state.preempted_jobs[preempted:]:
            if f"preempt:{self.state.job(job_id).share_name}" not in self.harm_allowed:
                self._problem("jobs_harmed", f"{job_id} preempted")

    def _check_share(self, share: FakeShare, declared: Declared) -> None:
        if declared.enabled and share.state != "ENABLED":
            self._problem("left_disabled", share.name, share.arn)
        elif not declared.matches(share):
            self._problem("drifted", f"{share.name}: {share.summary()} vs {declared}", share.arn)

    def _problem(self, kind: str, detail: str, share: str | None = None) -> None:
        """Count ``kind`` once per share for a state that persists across steps."""
        if share is not None:
            if (kind, share) in self._reported:
                return
            self._reported.add((kind, share))
        setattr(self.counts, kind, getattr(self.counts, kind) + 1)
        self.counts.problems.append(f"{self.step_name}: {kind}: {detail[:400]}")


@contextlib.contextmanager
def quiet_runtime() -> Iterator[None]:
    """The runtime's log at WARNING: a million log lines would be most of the run."""
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def run(sequences: int, seed: int = 0, steps: int = 14,
        rates: FaultRates | None = None) -> Counts:
    total = Counts()
    for index in range(sequences):
        sequence = Sequence(f"{seed}-{index}", rates or FaultRates(), steps)
        with quiet_runtime():
            total.add(sequence.run())
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sequences", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=14, help="deployments per sequence")
    parser.add_argument("--show", type=int, default=10, help="problems to print")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    counts = run(args.sequences, args.seed, args.steps)
    elapsed = time.perf_counter() - started
    for name, value in vars(counts).items():
        if isinstance(value, int):
            print(f"{name:<28} {value}")
    print(f"{'violations':<28} {counts.violations}")
    print(f"{'seconds':<28} {elapsed:.1f}")
    print("deployments by kind: " + ", ".join(
        f"{kind} {number}" for kind, number in sorted(counts.actions.items())))
    for problem in counts.problems[: args.show]:
        print("  " + problem)
    return 1 if counts.violations else 0


if __name__ == "__main__":
    sys.exit(main())
