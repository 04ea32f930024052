"""What ``status``, ``explain`` and ``preview`` may call: read-only AWS Batch actions, and
CloudFormation's DescribeStacks for ``preview``.

One list for the construct grant (``TrainingJobQueue.grant_read_status``), the JSON policy the
README gives people who do not use CDK (:func:`read_status_policy`), and the test that runs the
commands against a fake Batch and checks every call they make is granted.
"""

from __future__ import annotations

from typing import Any

from quota_constructs.wire.share_arn import quota_shares_of

QUEUE_ACTIONS = ("batch:GetJobQueueSnapshot", "batch:ListQuotaShares")
"""Scoped to the job queue's ARN."""
SHARE_ACTIONS = ("batch:DescribeQuotaShare", "batch:ListTagsForResource")
"""Scoped to the queue's quota shares (``<queue ARN>/quota-share/*``)."""
UNSCOPED_ACTIONS = (
    "batch:DescribeJobQueues",
    "batch:DescribeServiceEnvironments",
    "batch:DescribeServiceJob",
    "batch:ListServiceJobs",
)
"""The Service Authorization Reference lists no resource type for these, so IAM accepts only
``*``; each only reads."""
STACK_ACTIONS = ("cloudformation:DescribeStacks",)
"""Scoped to the stacks of the queue's account and region (:func:`stacks_of`): ``preview``
asks for the id of the stack that deploys the template or declaration it reads (not with
``--stack-id``)."""
READ_STATUS_ACTIONS = (*QUEUE_ACTIONS, *SHARE_ACTIONS, *UNSCOPED_ACTIONS, *STACK_ACTIONS)


def stacks_of(job_queue_arn: str) -> str:
    """``arn:<partition>:cloudformation:<region>:<account>:stack/*`` for the queue's partition,
    region and account (a share lives in its queue's, and so does the stack that deploys it)."""
    _, partition, _, region, account, _ = job_queue_arn.split(":", 5)
    return f"arn:{partition}:cloudformation:{region}:{account}:stack/*"


def read_status_policy(job_queue_arn: str) -> dict[str, Any]:
    """The IAM policy document granting exactly :data:`READ_STATUS_ACTIONS` for one queue."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": list(QUEUE_ACTIONS), "Resource": job_queue_arn},
            {"Effect": "Allow", "Action": list(SHARE_ACTIONS),
             "Resource": quota_shares_of(job_queue_arn)},
            {"Effect": "Allow", "Action": list(UNSCOPED_ACTIONS), "Resource": "*"},
            {"Effect": "Allow", "Action": list(STACK_ACTIONS),
             "Resource": stacks_of(job_queue_arn)},
        ],
    }
