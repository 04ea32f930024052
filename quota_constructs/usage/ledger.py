"""``usage --ledger s3://...``: the job ledger's records (:mod:`quota_constructs.wire.job_ledger`),
read with the standard boto3 configuration (``--profile``, ``--region``,
``AWS_ENDPOINT_URL_S3``) and boto3's own retries.

Read-only: ``s3:ListBucket`` on the bucket and ``s3:GetObject`` on the queue's folder
(``JobLedger.grant_read``). Objects are listed from the first day of ``--since`` on (keys sort
by day) and read :data:`WORKERS` at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..wire.job_ledger import URL_SYNTAX, LedgerLocation, read_document
from ..wire.job_record import JobRecord
from .jobs import UsageInputError

WORKERS = 16
PROGRESS_EVERY = 5000


def parse_location(url: str) -> LedgerLocation:
    try:
        return LedgerLocation.parse(url)
    except ValueError:
        raise UsageInputError(f"--ledger got {url!r}; allowed: {URL_SYNTAX}") from None


def s3_client(*, profile: str | None, region: str | None) -> Any:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError

    try:
        session = boto3.Session(profile_name=profile, region_name=region)
        return session.client("s3", config=Config(
            retries={"mode": "standard", "max_attempts": 8},
            user_agent_extra="quota-constructs-cli"))
    except BotoCoreError as error:
        raise UsageInputError(f"cannot create an S3 client for --ledger: {error}") from None


def read_ledger(
    client: Any,
    location: LedgerLocation,
    *,
    since_ms: int | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> list[tuple[JobRecord, int]]:
    """Every record under ``location`` (from ``since_ms``'s day on), each with the moment it
    was written (the object's ``LastModified``, epoch ms)."""
    from botocore.exceptions import BotoCoreError, ClientError

    listing: dict[str, Any] = {"Bucket": location.bucket, "Prefix": location.folder}
    if since_ms is not None:
        listing["StartAfter"] = location.start_after(since_ms)
    keys: list[tuple[str, int]] = []
    try:
        for page in client.get_paginator("list_objects_v2").paginate(**listing):
            for item in page.get("Contents") or []:
                if item["Key"].endswith(".json"):
                    keys.append((item["Key"], round(item["LastModified"].timestamp() * 1000)))
        progress(f"ledger {location.url}: {len(keys):,} records")

        def get(entry: tuple[str, int]) -> tuple[JobRecord, int]:
            key, written = entry
            body = client.get_object(Bucket=location.bucket, Key=key)["Body"].read()
            try:
                return read_document(body), written
            except ValueError as error:
                raise UsageInputError(f"{location.url}: s3://{location.bucket}/{key}: "
                                      f"{error}") from None

        records = []
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for number, record in enumerate(pool.map(get, keys), start=1):
                records.append(record)
                if number % PROGRESS_EVERY == 0:
                    progress(f"ledger: read {number:,} of {len(keys):,} records")
        return records
    except ClientError as error:
        detail = error.response.get("Error", {})
        raise UsageInputError(f"--ledger {location.url}: {detail.get('Code', 'error')}: "
                              f"{detail.get('Message', error)}") from None
    except BotoCoreError as error:
        raise UsageInputError(f"--ledger {location.url}: {error}") from None
