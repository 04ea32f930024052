"""A local emulator of one quota-managed AWS Batch queue, for tests and rehearsals.

``quota-constructs emulate`` (or :class:`Emulator` in Python) serves a declared queue as the
AWS Batch API (REST-JSON, read from botocore's own service model) on 127.0.0.1, scheduling with
the simulator's engine and the library's one rules model. It is not AWS.

    with Emulator(declaration, queue_name="training") as emu:
        batch = boto3.client("batch", endpoint_url=emu.endpoint_url, region_name="us-east-1")
        ...
        emu.advance(60)

Where AWS Batch is silent, scheduling follows the simulator's stated assumptions
(:class:`~quota_constructs.simulation.SimulationOptions`, the same flags as ``simulate``) and
the rules model's (:mod:`quota_constructs.model.borrowing`, e.g. an over-allocated
environment). What AWS documents it follows as written (botocore's service model and the AWS
Batch user guide): ``TerminateServiceJobs`` treats ids it cannot find as processed; tags follow
the guide's tag restrictions (:mod:`quota_constructs.model.tags`); a job name follows
SubmitServiceJob's pattern; ``ListServiceJobs`` lists newest first with a filter and ignores
``jobStatus`` with a filter other than the share ones.

The emulator's own answers where AWS documents nothing, stated here once:

- **Time.** Emulated time starts at the real time when the emulator starts, or at ``--start``
  (``Emulator(start=...)``); it moves only by ``advance`` (manual clock) or also with real
  time at ``--speed`` (wall clock). Every time it answers with (``createdAt``, ``startedAt``,
  ``lastUpdatedAt``, an event's ``time``) and every answer's HTTP ``Date`` header are on that
  clock. A snapshot's ``lastUpdatedAt`` is the moment of the call (the emulator's snapshot is
  never stale; AWS's may be).
- Shares are ``VALID`` as soon as they are created or updated; the environment, policy and
  queue are ``VALID``/``ENABLED`` throughout. The declared shares are recorded as deployed by
  the library's custom resource (owner marker and lifecycle tag of an emulated stack), so
  ``preview`` judges a change as it would on a deployed queue. Their declared tags and those
  two markers must fit AWS's 50 tags, or the emulator does not start.
- A submitted job stays ``SUBMITTED`` until the next scheduling pass (the clock moving: a
  manual ``advance``, or real time under the wall clock), then becomes ``RUNNABLE`` at its
  submission time and is placed as of then; submissions between two passes are dispatched by
  priority. Priority changes, finishes and terminations take effect at once, and what they
  free is offered at once.
- A dispatched job passes ``SCHEDULED``, ``STARTING`` and ``RUNNING`` at the same moment and
  runs for its payload's ``StoppingCondition.MaxRuntimeInSeconds`` (SageMaker's default, one
  day, when it names none); no SageMaker training job exists (its ARN is made up).
- A job the declaration can never run (an instance type the environment lacks, more instances
  than its share can reach) stays ``RUNNABLE`` with AWS's ``MISCONFIGURATION:`` reason, and a
  Queue Blocked event is emitted once.
- Preempted attempts carry AWS's documented cross-share reason, or ``In-share preemption
  triggered by a higher priority job``; ``recentPreemptedAttempts`` keeps the last five.
- ``ListServiceJobs``: with the ``QUOTA_SHARE_NAME`` filter and no ``jobStatus``, RUNNING jobs
  only (AWS says both "if you don't specify a status, only RUNNING jobs are returned" and
  that a filter returns any status; the share filter is the documented exception that reads
  ``jobStatus``, so the no-status rule is taken); ``SHARE_IDENTIFIER`` matches nothing (no job
  of a quota-share queue has one); without a filter, newest first too. The snapshot's
  ``frontOfQueue`` is the engine's scheduling order and ``earliestTimeAtPosition`` the time
  the job last became RUNNABLE.
- ``clientToken``: AWS documents that two submissions "with identical payloads and
  clientTokens ... are considered the same request and the second request is rejected"; the
  emulator reads "rejected" as not carried out again: the second answers with the first's job
  (as AWS's idempotent operations do), so a retried submission neither makes a second job nor
  reports a failure for one that exists. A token reused with any other request (another
  name, payload, share, priority, tags) is refused with a ClientException naming the token
  and the first job. Tokens never expire.
- ``TerminateServiceJobs``: whether an id is "malformed" (AWS's ``ValidationException``) is not
  documented, so every id it cannot find is processed successfully; a job already finished
  is processed successfully and left as it is. ``TerminateServiceJob`` (one job) refuses an
  unknown id with a ClientException saying it was not found.
- Tag characters are not judged (the guide names only what is "generally allowed" across
  services, and botocore's model gives no pattern); ``UntagResource`` refuses ``aws:`` keys
  ("You can't edit or delete tag keys or values with this prefix").
- Errors are ``ClientException`` (HTTP 400) naming the field and the value; faults of the
  emulator itself are ``ServerException`` (500).
- No IAM: every call is allowed. ``DeleteQuotaShare`` terminates the share's jobs at once.
"""

from .api import Emulator
from .clock import Clock
from .protocol import ApiError
from .service import QueueService

__all__ = ["ApiError", "Clock", "Emulator", "QueueService"]
