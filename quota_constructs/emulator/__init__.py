"""A local emulator of one quota-managed AWS Batch queue, for tests and rehearsals.

``quota-constructs emulate`` (or :class:`Emulator` in Python) serves a declared queue as the
AWS Batch API (REST-JSON, read from botocore's own service model) on 127.0.0.1, scheduling with
the simulator's engine and the library's one rules model. It is not AWS.

    with Emulator(declaration, queue_name="training") as emu:
        batch = boto3.client("batch", endpoint_url=emu.endpoint_url, region_name="us-east-1")
        ...
        emu.advance(60)

Where AWS Batch is silent, scheduling follows the simulator's stated assumptions
(:class:`~quota_constructs.simulation.SimulationOptions`, the same flags as ``simulate``).
The emulator's own answers where AWS documents nothing, stated here once:

- Shares are ``VALID`` as soon as they are created or updated; the environment, policy and
  queue are ``VALID``/``ENABLED`` throughout. The declared shares are recorded as deployed by
  the library's custom resource (owner marker and lifecycle tag of an emulated stack), so
  ``preview`` judges a change as it would on a deployed queue.
- A submitted job stays ``SUBMITTED`` until the next scheduling pass (the clock moving: a
  manual ``advance``, or real time under the wall clock), then becomes ``RUNNABLE`` at its
  submission time; submissions between two passes are dispatched by priority. Priority
  changes, finishes and terminations take effect at once, and what they free is offered at
  once.
- A dispatched job passes ``SCHEDULED``, ``STARTING`` and ``RUNNING`` at the same moment and
  runs for its payload's ``StoppingCondition.MaxRuntimeInSeconds`` (SageMaker's default, one
  day, when it names none); no SageMaker training job exists (its ARN is made up).
- A job the declaration can never run (an instance type the environment lacks, more instances
  than its share can reach) stays ``RUNNABLE`` with AWS's ``MISCONFIGURATION:`` reason, and a
  Queue Blocked event is emitted once.
- Preempted attempts carry AWS's documented cross-share reason, or ``In-share preemption
  triggered by a higher priority job``; ``recentPreemptedAttempts`` keeps the last five.
- ``ListServiceJobs`` lists newest first (AWS documents this with filters); the snapshot's
  ``frontOfQueue`` is the engine's scheduling order and ``earliestTimeAtPosition`` the time
  the job last became RUNNABLE.
- No IAM: every call is allowed. ``DeleteQuotaShare`` terminates the share's jobs at once.
"""

from .api import Emulator
from .clock import Clock
from .protocol import ApiError
from .service import QueueService

__all__ = ["ApiError", "Clock", "Emulator", "QueueService"]
