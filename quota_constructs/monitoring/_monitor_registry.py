"""One monitor per job queue: a second would tell every owner everything twice.

A queue is recognised as the same queue through its share ledger (the queue created here and
every import of it share one, see :mod:`quota_constructs._share_ledger`); a queue without one
(another ``ITrainingJobQueue`` implementation) by its resolved ARN within the app. The record is
keyed by the ledger or the app, so two apps in one process never see each other's monitors.
"""

from __future__ import annotations

import json
from weakref import WeakKeyDictionary

from aws_cdk import Stack
from constructs import IConstruct

from .._share_ledger import ShareLedger, ledger_of
from ..job_queue import ITrainingJobQueue
from ..model import QuotaConfigError

_BY_LEDGER: WeakKeyDictionary[ShareLedger, str] = WeakKeyDictionary()
_BY_APP: WeakKeyDictionary[IConstruct, dict[str, str]] = WeakKeyDictionary()


def claim_queue(queue: ITrainingJobQueue, *, subject: str, path: str) -> None:
    """Record that the monitor at ``path`` watches ``queue``; refuse a second monitor."""
    ledger = ledger_of(queue)
    if ledger is not None:
        existing = _BY_LEDGER.get(ledger)
    else:
        key = json.dumps(Stack.of(queue).resolve(queue.job_queue_arn), sort_keys=True)
        existing = _BY_APP.setdefault(queue.node.root, {}).get(key)
    if existing is not None and existing != path:
        raise QuotaConfigError(
            subject, "job_queue", queue.node.path,
            f"a job queue no other QuotaShareMonitoring watches: {existing} already watches "
            "it, and a second monitor would send every owner each notice twice (give the one "
            "monitor every share, or watch another queue)",
        )
    if ledger is not None:
        _BY_LEDGER[ledger] = path
    else:
        _BY_APP[queue.node.root][key] = path
