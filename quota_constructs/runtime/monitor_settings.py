"""What the monitoring Lambdas are told: their environment and the declaration file.

Settings come only from the environment variables of :mod:`monitoring_contract` and the
declaration file they name, so a function runs the same wherever the template puts it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from quota_constructs.model import (
    QuotaShareSpec,
    ShareAgreement,
)
from quota_constructs.wire.job_ledger import LEDGER_BUCKET_ENV, LEDGER_PREFIX_ENV
from quota_constructs.wire.monitoring_contract import (
    AGREEMENT_METRICS_ENV,
    DECLARATION_FILE_ENV,
    DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
    DEFAULT_METRIC_NAMESPACE,
    DEFAULT_RUNNABLE_COUNT_CAP,
    ENFORCE_BUDGET_ENV,
    JOB_QUEUE_ARN_ENV,
    JOB_QUEUE_NAME_ENV,
    MAX_SNAPSHOT_AGE_ENV,
    METRIC_NAMESPACE_ENV,
    OWNER_TOPICS_ENV,
    RUNNABLE_COUNT_CAP_ENV,
)
from quota_constructs.wire.monitoring_declaration import parse_monitoring_declaration
from quota_constructs.wire.share_arn import job_queue_name_of

from .errors import QuotaShareLifecycleError
from .structured_log import log

# The directory holding the ``quota_constructs`` package: the code root of the Lambda asset.
_CODE_ROOT = Path(__file__).resolve().parents[2]


class MonitorConfigurationError(QuotaShareLifecycleError):
    """The function's environment or declaration file is missing or unreadable."""


@dataclass(frozen=True)
class MonitoredQueue:
    """The one job queue a monitor watches, by ARN and by name (either may be all it has)."""

    arn: str
    name: str

    @classmethod
    def of(cls, arn: str, name: str) -> MonitoredQueue:
        return cls(arn=arn, name=name or job_queue_name_of(arn))

    @property
    def reference(self) -> str:
        """What to pass as ``jobQueue`` to AWS Batch."""
        return self.arn or self.name

    def holds(self, job_queue: object) -> bool:
        """Whether a job's ``jobQueue`` (an ARN or a name) is this queue."""
        if not isinstance(job_queue, str) or not job_queue:
            return False
        if job_queue.startswith("arn:") and self.arn.startswith("arn:"):
            return job_queue == self.arn
        return job_queue_name_of(job_queue) == self.name


@dataclass(frozen=True)
class MonitorSettings:
    queue: MonitoredQueue
    shares: tuple[QuotaShareSpec, ...]
    namespace: str = DEFAULT_METRIC_NAMESPACE
    owner_topics: Mapping[str, str] = field(default_factory=dict)
    enforce_budget: bool = False
    runnable_count_cap: int = DEFAULT_RUNNABLE_COUNT_CAP
    max_snapshot_age_seconds: int | None = DEFAULT_MAX_SNAPSHOT_AGE_SECONDS
    """None: a snapshot of any age is judged."""
    agreement_metrics: bool = True
    """Whether started jobs' waits and budget failures are published for the shares whose
    agreement declares a wait target or an interruption budget."""
    ledger_bucket: str | None = None
    """The job ledger's bucket (None: no ledger is kept)."""
    ledger_prefix: str = ""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> MonitorSettings:
        env = os.environ if environ is None else environ
        arn = env.get(JOB_QUEUE_ARN_ENV, "").strip()
        name = env.get(JOB_QUEUE_NAME_ENV, "").strip()
        if not arn and not name:
            raise MonitorConfigurationError(
                f"neither {JOB_QUEUE_ARN_ENV} nor {JOB_QUEUE_NAME_ENV} is set: the monitor "
                "does not know which job queue to watch"
            )
        return cls(
            queue=MonitoredQueue.of(arn, name),
            shares=load_declaration(_declaration_path(env)),
            namespace=env.get(METRIC_NAMESPACE_ENV, "").strip() or DEFAULT_METRIC_NAMESPACE,
            owner_topics=_owner_topics(env.get(OWNER_TOPICS_ENV, "")),
            enforce_budget=env.get(ENFORCE_BUDGET_ENV, "").strip().lower() == "true",
            runnable_count_cap=_count_cap(env.get(RUNNABLE_COUNT_CAP_ENV, "")),
            max_snapshot_age_seconds=_max_snapshot_age(env.get(MAX_SNAPSHOT_AGE_ENV, "")),
            agreement_metrics=env.get(AGREEMENT_METRICS_ENV, "").strip().lower() != "false",
            ledger_bucket=env.get(LEDGER_BUCKET_ENV, "").strip() or None,
            ledger_prefix=env.get(LEDGER_PREFIX_ENV, "").strip(),
        )

    def share(self, name: str) -> QuotaShareSpec | None:
        return next((spec for spec in self.shares if spec.name == name), None)

    def agreement_of(self, share_name: str) -> ShareAgreement | None:
        spec = self.share(share_name)
        return spec.agreement if spec is not None else None

    def topic_of(self, agreement: ShareAgreement | None) -> str | None:
        """The SNS topic that reaches the agreement's owner, if the monitor was given one."""
        if agreement is None:
            return None
        return self.owner_topics.get(agreement.owner)


@lru_cache(maxsize=8)
def load_declaration(path: Path) -> tuple[QuotaShareSpec, ...]:
    """The declared shares in ``path``; read once per warm container."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MonitorConfigurationError(
            f"cannot read the monitoring declaration {path}: {error}"
        ) from error
    return parse_monitoring_declaration(document)


def _declaration_path(env: Mapping[str, str]) -> Path:
    relative = env.get(DECLARATION_FILE_ENV, "").strip()
    if not relative:
        raise MonitorConfigurationError(f"{DECLARATION_FILE_ENV} is not set")
    path = Path(relative)
    if path.is_absolute():
        return path
    # Lambda's code root first; then the asset this module was loaded from; then the working
    # directory (a test or a local run).
    roots = [Path(env["LAMBDA_TASK_ROOT"])] if env.get("LAMBDA_TASK_ROOT") else []
    roots += [_CODE_ROOT, Path.cwd()]
    for root in roots:
        if (root / path).is_file():
            return root / path
    raise MonitorConfigurationError(
        f"the monitoring declaration {relative!r} ({DECLARATION_FILE_ENV}) is not in "
        + ", ".join(str(root) for root in roots)
    )


def _owner_topics(raw: str) -> dict[str, str]:
    if not raw.strip():
        return {}
    try:
        topics = json.loads(raw)
    except ValueError:
        topics = None
    if not isinstance(topics, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in topics.items()
    ):
        # Notifications are lost, metrics are not: say so loudly and carry on.
        log("owner_topics_unreadable", variable=OWNER_TOPICS_ENV, value=raw[:500])
        return {}
    return dict(topics)


def _count_cap(raw: str) -> int:
    text = raw.strip()
    if not text:
        return DEFAULT_RUNNABLE_COUNT_CAP
    if not text.isdigit():
        raise MonitorConfigurationError(
            f"{RUNNABLE_COUNT_CAP_ENV} is {raw!r}: expected a whole number of jobs (0 = no count)"
        )
    return int(text)


def _max_snapshot_age(raw: str) -> int | None:
    text = raw.strip()
    if not text:
        return DEFAULT_MAX_SNAPSHOT_AGE_SECONDS
    if text.lower() == "off":
        return None
    if not text.isdigit() or int(text) < 1:
        raise MonitorConfigurationError(
            f"{MAX_SNAPSHOT_AGE_ENV} is {raw!r}: expected whole seconds (at least 1) or 'off'"
        )
    return int(text)
