"""How a team submits into its share, as the agreement shows it: the exact boto3
``submit_service_job`` call and the SageMaker Python SDK v3 equivalent, with the values the
share's grants and contract require (queue, share, tag, a priority within the ceiling, the
interruption budget as ``preemptionConfiguration``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .deployed_names import DeployedName
from .submission import MIN_JOB_PRIORITY, submit_service_job_request

EXAMPLE_PRIORITY = 10
"""The priority the examples use when the ceiling allows it (any value up to the ceiling
works; 0 is avoided because the SageMaker SDK drops it)."""


@dataclass(frozen=True)
class SubmissionTerms:
    """What one share's submissions must carry, from its grants and its agreement."""

    share: str
    queue: DeployedName
    max_priority: int | None
    budget: int | None

    @property
    def example_priority(self) -> int:
        if self.max_priority is None:
            return EXAMPLE_PRIORITY
        return min(self.max_priority, EXAMPLE_PRIORITY)

    def request(self) -> dict[str, Any]:
        """The example's ``submit_service_job`` arguments; ``jobQueue`` is None when only a
        stack output holds the queue's name."""
        request = submit_service_job_request(
            job_queue=self.queue.value or "QUEUE", share=self.share, job_name="my-training-job",
            training_job_request={}, priority=self.example_priority, budget=self.budget,
        )
        # The payload is the team's own CreateTrainingJob request; the queue may be unknown.
        return request | {"jobQueue": self.queue.value, "serviceRequestPayload": None}


def strictest_ceiling(ceilings: Sequence[int | None]) -> int | None:
    """The ceiling every one of several submit grants allows."""
    numbers = [ceiling for ceiling in ceilings if ceiling is not None]
    return min(numbers) if numbers else None


def how_to_submit_markdown(terms: SubmissionTerms) -> list[str]:
    """The agreement's "How to submit" block for one share (Markdown lines)."""
    request = terms.request()
    queue_line = _queue_line(terms.queue)
    preemption = request.get("preemptionConfiguration")
    tags = request["tags"]
    boto = [
        "```python",
        "import json",
        "",
        "import boto3",
        "",
        *queue_line,
        "training_job_request = {...}  # SageMaker CreateTrainingJob request",
        'batch = boto3.client("batch")',
        "batch.submit_service_job(",
        '    jobName="my-training-job",',
        "    jobQueue=QUEUE,",
        '    serviceJobType="SAGEMAKER_TRAINING",',
        f'    quotaShareName="{terms.share}",',
        f"    schedulingPriority={request['schedulingPriority']},",
        f"    tags={json.dumps(tags)},",
        *([f"    preemptionConfiguration={json.dumps(preemption)},"] if preemption else []),
        "    serviceRequestPayload=json.dumps(training_job_request),",
        ")",
        "```",
    ]
    sdk = [
        "```python",
        "from sagemaker.train.aws_batch.training_queue import TrainingQueue",
        "",
        *queue_line,
        "# trainer: a sagemaker.train.ModelTrainer in Mode.SAGEMAKER_TRAINING_JOB",
        "TrainingQueue(QUEUE).submit(",
        "    trainer, inputs,",
        '    job_name="my-training-job",',
        f'    quota_share_name="{terms.share}",',
        f"    priority={request['schedulingPriority']},",
        f"    tags={json.dumps(tags)},",
        *([f"    preemption_config={json.dumps(preemption)},"] if preemption else []),
        ")",
        "```",
    ]
    budget_text = (
        "no `preemptionConfiguration`: the share's budget is unlimited, and so is AWS's default"
        if preemption is None else
        f"`preemptionRetriesBeforeTermination` {terms.budget}, the share's interruption budget "
        "(Batch fails the job once it is preempted more often)"
    )
    ceiling_text = (
        "no priority ceiling: any priority from 0 to 9999"
        if terms.max_priority is None else
        f"a priority of at most {terms.max_priority} (the strictest ceiling granted; a request "
        "without a priority, or above it, is denied)"
    )
    traps = [
        "The SageMaker SDK drops a priority of 0 from the request (`if scheduling_priority:`)"
        + (
            ", and a priority-ceiling grant denies a request without a priority: submit with "
            "at least 1 through the SDK."
            if terms.max_priority is not None else "; the job then runs at Batch's default."
        ),
    ]
    if terms.max_priority == MIN_JOB_PRIORITY:
        sdk = [
            "The ceiling is 0, so the SDK cannot submit into this share at all (it never sends "
            "priority 0, and a request without a priority is denied): use boto3 or "
            "`quota_constructs.client.ShareClient`."
        ]
    traps.append(
        "The SDK does not add the share's tag by itself: pass `tags=` as above, or the request "
        "is denied."
    )
    traps.append(
        "`TrainingQueue.map(...)` takes no `preemption_config`: submit one job at a time to "
        "keep the interruption budget."
    )
    return [
        "- **How to submit** (values from this share's grants and contract): "
        f"`quotaShareName` `{terms.share}`, the tag `{next(iter(tags))}` = `{terms.share}`, "
        f"{ceiling_text}; {budget_text}.",
        "",
        "  With boto3:",
        "",
        *_indent(boto),
        "",
        "  With the SageMaker Python SDK v3 (`sagemaker-train`):",
        "",
        *_indent(sdk),
        "",
        "  SDK traps:",
        *[f"  - {trap}" for trap in traps],
        "",
        "  Or with this library's client (checks the priority and the instance types before "
        "calling Batch): "
        f'`ShareClient.from_agreement("<this file>.json", share="{terms.share}")`.',
    ]


def _queue_line(queue: DeployedName) -> list[str]:
    if queue.value is not None:
        return [f'QUEUE = "{queue.value}"']
    if queue.output is not None:
        return [
            "# The queue's name is generated at deployment; it is stack output "
            f"{queue.output.output_key} of {queue.output.stack}:",
            f"#   aws cloudformation describe-stacks --stack-name {queue.output.stack} "
            f"--query \"Stacks[0].Outputs[?OutputKey=='{queue.output.output_key}']"
            '.OutputValue" --output text',
            f'QUEUE = "<{queue.output.output_key}>"',
        ]
    return ['QUEUE = "<the job queue\'s name or ARN>"']


def _indent(lines: list[str]) -> list[str]:
    return [f"  {line}" if line else "" for line in lines]
