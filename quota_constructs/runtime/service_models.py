"""The AWS service models a Lambda of this library carries, and a boto3 session that prefers them.

A Lambda's Python runtime ships whatever botocore AWS last bundled with it, which can predate the
AWS Batch quota-share API. The library's Lambda assets therefore carry the service models of the
botocore installed where the app was synthesized (staged by ``quota_constructs._runtime_asset``,
never committed), in botocore's own data layout, under :data:`STAGED_MODELS`. botocore looks a
model up along its data path before its built-in data, so putting that directory first makes
every client of :func:`boto3_session` use the carried model, whatever the runtime's botocore.

Outside a Lambda asset (tests, a checkout) the directory does not exist and the installed
botocore's models are used as they are.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

MINIMUM_BOTOCORE = "1.42.72"
"""The first botocore whose AWS Batch model has the quota-share API."""
REQUIRED_BATCH_OPERATIONS = (
    "CreateQuotaShare",
    "DescribeQuotaShare",
    "UpdateQuotaShare",
    "DeleteQuotaShare",
    "ListQuotaShares",
    "GetJobQueueSnapshot",
    "ListServiceJobs",
    "TagResource",
    "UntagResource",
    "ListTagsForResource",
)
BOTOCORE_DATA_DIRECTORY = "botocore_data"
STAGED_MODELS = Path(__file__).resolve().with_name(BOTOCORE_DATA_DIRECTORY)
"""``<service>/<api version>/<model>.json`` files, as in botocore's own ``data`` directory."""


def carries_models() -> bool:
    return STAGED_MODELS.is_dir()


@functools.cache
def boto3_session() -> Any:
    """One session per Lambda environment, its data path led by the carried models.

    Cached: building a session and loading models costs more than the requests of a warm
    invocation. Credentials and region still come from the environment, as for boto3's default.
    """
    import boto3
    import botocore.session

    core = botocore.session.get_session()
    if carries_models():
        # The data loader is created on first use from this variable (AWS_DATA_PATH), so an
        # AWS_DATA_PATH the function was given still applies, after the carried models.
        given = core.get_config_variable("data_path")
        core.set_config_variable(
            "data_path", os.pathsep.join([str(STAGED_MODELS), *([given] if given else [])])
        )
    return boto3.Session(botocore_session=core)
