"""The record of every quota share an app declares on one job queue.

A queue can stand in an app as several constructs — the queue created here and any number of
imports of it (``TrainingJobQueue.from_job_queue_arn`` twice, in two team stacks). They all
share one ledger, so a share added through any of them is checked against all the others: the
20-share limit, unique names and, once any of them knows the environment's capacity, the
capacity rules. Queues are recognised as the same queue by account, region and name when all
three are literal, or by the very same ARN token.

The ledger belongs to no construct module: queues create ledgers and shares write to them, so
``job_queue`` depends on ``quota_share`` and never the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast
from weakref import WeakKeyDictionary

import jsii
from aws_cdk import Annotations, Aspects, IAspect
from constructs import Construct, IConstruct, IValidation

from ._construct_props import CONSTRUCT_PATH, PathSource, errors_name_path, with_path
from .model import (
    CapacityLimit,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    check_share_set,
    is_unresolved,
    queue_subject,
)

ALLOCATION_WARNING_ID = "quota_constructs:allocation"
"""Id of the synth warnings about how a queue's capacity is divided (over-allocation, capacity
no share owns); acknowledge them with ``Annotations.of(queue).acknowledge_warning(...)``."""

BORROW_WARNING_ID = "quota_constructs:borrow"
"""Id of the synth warnings about a LEND_AND_BORROW share that can borrow nothing of a type it
lists (its borrow limit rounds down to 0 instances, or nothing is there to borrow);
acknowledge them with ``Annotations.of(queue).acknowledge_warning(...)``."""

UNOWNED_CAPACITY_CONTEXT = "quota_constructs:unownedCapacityBorrowable"
"""CDK context key (true/false, default true) for the rules model's assumption that borrowing
shares may use capacity no share owns (:mod:`quota_constructs.model.borrowing`)."""

QueueKey = tuple[str, str, str] | str
"""``(account, region, name)`` of a queue whose three are literal, else its ARN token."""

BOOKKEEPING_ID = "QuotaConstructsBookkeeping"


class StackRecords:
    """The library's records of one stack, kept by its app's :class:`AppBookkeeping`. Each
    field belongs to the module named in its comment, which sets it on first use and checks
    its type on reading (this module imports none of them: they import it)."""

    def __init__(self) -> None:
        self.tag_limits: IValidation | None = None
        """``quota_share._TagLimits``: the stack's one tag-count validation."""
        self.share_provider: IConstruct | None = None
        """``share_provider.QuotaShareProvider``: the stack's default provider."""
        self.preemptions: IConstruct | None = None
        """``monitoring.stack_preemptions.StackPreemptions``: the stack's preemptions function."""


class AppBookkeeping(Construct):
    """The library's per-app records, the one place it keeps state across constructs: a hidden
    child of the app's root (id ``QuotaConstructsBookkeeping``), so two apps in one process
    never share state and an app's records go when the app does. It holds no resources.

    Per queue: the ledgers (:attr:`ledgers`, :attr:`queue_ledgers`) and, for a queue without a
    ledger, its one monitor (:attr:`monitors`); per stack: :class:`StackRecords`
    (:meth:`stack_records`). Nothing is kept on other constructs' attributes or in module-level
    registries; the only module-level dictionaries are weak caches of jsii lookups, which
    change no behaviour."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.ledgers: dict[QueueKey, ShareLedger] = {}
        """One ledger per queue known by account, region and name (or ARN token)."""
        self.queue_ledgers: dict[IConstruct, ShareLedger] = {}
        """The ledger each queue construct of this library stands for."""
        self.monitors: dict[str, str] = {}
        """Monitor path by resolved queue ARN, for queues without a ledger (another
        ``ITrainingJobQueue`` implementation); a ledger's queue keeps its monitor itself."""
        self._stacks: dict[IConstruct, StackRecords] = {}

    def stack_records(self, stack: IConstruct) -> StackRecords:
        """The records of ``stack`` (a ``Stack`` of this app), created on first use."""
        records = self._stacks.get(stack)
        if records is None:
            records = self._stacks[stack] = StackRecords()
        return records

    @classmethod
    def of(cls, scope: IConstruct) -> AppBookkeeping:
        known = _BOOKKEEPING_BY_SCOPE.get(scope)
        if known is not None:
            return known
        root = scope.node.root
        existing = root.node.try_find_child(BOOKKEEPING_ID)
        if not isinstance(existing, AppBookkeeping):
            existing = cls(cast(Construct, root), BOOKKEEPING_ID)
        _BOOKKEEPING_BY_SCOPE[scope] = existing
        return existing


# A cache only (no behaviour depends on it): which bookkeeping a scope's app has, remembered
# weakly (it goes with the scope), because finding it is four round trips to the jsii runtime,
# asked for every share declared.
_BOOKKEEPING_BY_SCOPE: WeakKeyDictionary[IConstruct, AppBookkeeping] = WeakKeyDictionary()


@dataclass(frozen=True)
class RecordedShare:
    """A share as the ledger tells its observers: the spec, and the construct declaring it
    (complete: its resource and tags exist)."""

    spec: QuotaShareSpec
    construct: IConstruct


ShareObserver = Callable[[RecordedShare], None]
"""Told of every share of a queue, once each, in the order they were recorded."""


class ShareLedger:
    """The shares declared on one queue, checked together; see the module docstring.

    Every change is checked first and applied after, so a construct that fails a check is
    never created and leaves the ledger as it was. Observers (:meth:`observe`; the queue's
    monitor) are told of each share as it is recorded, so what they build for a share exists
    as soon as both they and the share do."""

    def __init__(self, *, label: str, unowned_capacity_borrowable: bool = True) -> None:
        self._label = label
        self._unowned_capacity_borrowable = unowned_capacity_borrowable
        self._owner: IConstruct | None = None
        self._environment: tuple[str, str] | None = None
        self._capacity_limits: tuple[CapacityLimit, ...] | None = None
        self._capacity_from: IConstruct | None = None
        self._created_at: PathSource | None = None
        self._specs: list[QuotaShareSpec] = []
        self._recorded: list[RecordedShare] = []
        self._observers: list[ShareObserver] = []
        self._allocation: QuotaAllocation | None = None
        self.monitor_path: str | None = None
        """The path of the one monitor watching this queue (QuotaShareMonitoring)."""

    @property
    def label(self) -> str:
        return self._label

    @property
    def capacity_limits(self) -> tuple[CapacityLimit, ...] | None:
        return self._capacity_limits

    @property
    def environment(self) -> tuple[str, str] | None:
        """The queue's ``(account, region)`` when a construct for it knew them without a call
        into the jsii runtime (an import's literal ARN, a named queue's stack); else None."""
        return self._environment

    @property
    def specs(self) -> tuple[QuotaShareSpec, ...]:
        return tuple(self._specs)

    @property
    def allocation(self) -> QuotaAllocation | None:
        allocation = self._allocation
        if allocation is None or not any(CONSTRUCT_PATH in w for w in allocation.warnings):
            return allocation
        owner = self._owner
        assert owner is not None, "a ledger with an allocation has a queue"
        return replace(
            allocation, warnings=tuple(with_path(w, owner) for w in allocation.warnings)
        )

    def check_creation(self, queue: PathSource) -> None:
        """Check that ``queue`` (the future path of a construct) may create this queue. A second
        construct creating a queue of the same name in the same account and region is refused:
        AWS Batch names are unique there, so CloudFormation would fail on the second one, and
        their shares would otherwise be checked as if they were one queue's."""
        created_at = self._created_at
        if created_at is not None:
            earlier = created_at() if callable(created_at) else created_at.node.path
            with errors_name_path(queue):
                raise QuotaConfigError(
                    queue_subject(self._label), "job_queue_name", self._label,
                    f"a name no other job queue of this app has in the same account and region: "
                    f"{earlier} already creates a job queue named {self._label!r} there "
                    "(AWS Batch job queue names are unique per account and region); import "
                    "it with TrainingJobQueue.from_job_queue_arn to add shares to it",
                )

    def check_capacity(
        self, capacity_limits: Sequence[CapacityLimit] | None, *, queue: PathSource
    ) -> QuotaAllocation | None:
        """What a new construct for this queue (``queue``: it or its future path) knows of the
        environment's capacity, checked: the first to know it has every share so far checked
        against it (the allocation is returned for :meth:`attach`); a later one that knows a
        different capacity is refused."""
        if capacity_limits is None:
            return None
        if self._capacity_limits is not None:
            if set(self._capacity_limits) != set(capacity_limits):
                with errors_name_path(queue):
                    raise QuotaConfigError(
                        queue_subject(self._label), "capacity_limits", _text(capacity_limits),
                        f"{_text(self._capacity_limits)}, the capacity "
                        f"{self._capacity_from_path()} already gives this queue (one queue, one "
                        "environment): import it with the same capacity or without any",
                    )
            return None
        with errors_name_path(self._owner or queue):
            return QuotaAllocation.check(
                environment_limits=capacity_limits, shares=self._specs, queue_name=self._label,
                unowned_capacity_borrowable=self._unowned_capacity_borrowable,
            )

    def attach(
        self,
        queue: IConstruct,
        *,
        environment: tuple[str, str] | None,
        capacity_limits: Sequence[CapacityLimit] | None,
        allocation: QuotaAllocation | None,
        warnings_host: IConstruct,
        creates: bool = False,
    ) -> None:
        """Make ``queue`` one of the constructs standing for this queue, with what
        :meth:`check_capacity` returned for it; ``creates`` when it creates the queue (checked
        by :meth:`check_creation`)."""
        if creates:
            self._created_at = queue
        if self._owner is None:
            self._owner = queue
        if self._environment is None:
            self._environment = environment
        AppBookkeeping.of(queue).queue_ledgers[queue] = self
        if allocation is None or capacity_limits is None:
            return
        self._capacity_limits = tuple(capacity_limits)
        self._capacity_from = queue
        self._allocation = allocation
        # Warnings describe the finished allocation, which exists only once every share
        # (including those declared in other stacks) has been added; an aspect runs at synth
        # time, after construction, so each warning is reported once and only if it still
        # holds. It is hosted on a leaf where there is one (the L1), because every node it
        # visits is a call from the jsii runtime back into Python.
        Aspects.of(warnings_host).add(_AllocationWarnings(self, queue, warnings_host))

    def check(self, spec: QuotaShareSpec) -> QuotaAllocation | None:
        """Check ``spec`` against the shares already recorded (and the capacity, when
        known); the allocation it would make, for :meth:`record`."""
        shares = (*self._specs, spec)
        assert self._owner is not None, "shares are added through an attached queue"
        with errors_name_path(self._owner):
            if self._capacity_limits is not None:
                return QuotaAllocation.check(
                    environment_limits=self._capacity_limits, shares=shares,
                    queue_name=self._label,
                    unowned_capacity_borrowable=self._unowned_capacity_borrowable,
                )
            check_share_set(shares, subject=queue_subject(self._label))
            return None

    def record(
        self, spec: QuotaShareSpec, allocation: QuotaAllocation | None, *, share: IConstruct
    ) -> None:
        """Record ``spec`` as :meth:`check` passed it, declared by ``share`` (called once the
        share construct is complete), and tell every observer."""
        self._specs.append(spec)
        self._allocation = allocation
        recorded = RecordedShare(spec, share)
        self._recorded.append(recorded)
        for observer in tuple(self._observers):
            observer(recorded)

    def observe(self, observer: ShareObserver) -> None:
        """Tell ``observer`` of every share recorded so far, at once, and of each later one as
        it is recorded."""
        for recorded in tuple(self._recorded):
            observer(recorded)
        self._observers.append(observer)

    def _capacity_from_path(self) -> str:
        return self._capacity_from.node.path if self._capacity_from is not None else "?"


def _text(limits: Sequence[CapacityLimit]) -> str:
    return ", ".join(f"{limit.capacity_unit}={limit.max_capacity}" for limit in limits)


@jsii.implements(IAspect)
class _AllocationWarnings:
    def __init__(self, ledger: ShareLedger, queue: IConstruct, host: IConstruct) -> None:
        self._ledger = ledger
        self._queue = queue
        self._host = host

    def visit(self, node: IConstruct) -> None:
        if node is not self._host:
            return
        allocation = self._ledger.allocation
        if allocation is None:
            return
        for warning in allocation.warnings:
            Annotations.of(self._queue).add_warning_v2(ALLOCATION_WARNING_ID, warning)
        for warning in allocation.borrow_warnings:
            Annotations.of(self._queue).add_warning_v2(BORROW_WARNING_ID, warning)


def ledger_for(scope: IConstruct, *, key: QueueKey | None, label: str) -> ShareLedger:
    """The ledger of the queue a construct about to be created in ``scope`` stands for: the one
    a construct of the same ``key`` already uses in this app, else a new one."""
    borrowable = unowned_capacity_borrowable(scope)
    if key is None:
        return ShareLedger(label=label, unowned_capacity_borrowable=borrowable)
    known = AppBookkeeping.of(scope).ledgers
    ledger = known.get(key)
    if ledger is None:
        ledger = known[key] = ShareLedger(label=label, unowned_capacity_borrowable=borrowable)
    return ledger


def register_ledger(scope: IConstruct, *, key: QueueKey, ledger: ShareLedger) -> None:
    """Let imports of ``key`` (a created queue's own ARN token, handed to another stack of the
    app) find the created queue's ledger, so they stand for the same queue."""
    AppBookkeeping.of(scope).ledgers.setdefault(key, ledger)


def unowned_capacity_borrowable(scope: IConstruct) -> bool:
    """The app's choice for the unowned-capacity assumption (context, default True)."""
    value = scope.node.try_get_context(UNOWNED_CAPACITY_CONTEXT)
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise QuotaConfigError(
        "app context", UNOWNED_CAPACITY_CONTEXT, value, "true or false (default true)"
    )


def ledger_of(queue: object) -> ShareLedger | None:
    """The ledger of a queue construct of this library; None for anything else."""
    if not isinstance(queue, Construct):
        return None
    return AppBookkeeping.of(queue).queue_ledgers.get(queue)


def queue_key(account: str, region: str, name: str | None) -> QueueKey | None:
    """The key of a queue known by account, region and name; None when any is a token."""
    if name is None or any(is_unresolved(part) for part in (account, region, name)):
        return None
    return (account, region, name)
