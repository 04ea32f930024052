"""The job ledger: every terminal attempt of the monitored queues' jobs, kept for months in a
bucket the app owns, for ``quota-constructs usage --ledger`` (AWS Batch lists a finished job
for about a week).

Optional and off by default: ``QuotaShareMonitoring(job_ledger=True)`` (or a ``JobLedger``
shared by several monitors). The monitor's job-events functions write it
(:mod:`quota_constructs.runtime.job_ledger`; the layout is
:mod:`quota_constructs.wire.job_ledger`); what it costs is in the cost guide.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from .._construct_props import child_path
from .._l1_resources import default_policy
from ..model import QuotaConfigError
from ..nag_acknowledgments import acknowledge, acknowledge_wildcard_resource
from ..wire.job_ledger import DEFAULT_PREFIX, LEDGER_BUCKET_ENV, LEDGER_PREFIX_ENV, queue_folder

DEFAULT_RETENTION: Final = Duration.days(400)
"""13 months and a bit: this month and the same month last year."""
MIN_RETENTION_DAYS: Final = 8
WRITE_ACTIONS: Final = ("s3:PutObject",)
"""Less than AWS Batch's own week of listable jobs would keep nothing history cannot read."""


class JobLedger(Construct):
    """A bucket of job records with a lifecycle rule, and the grants to write and read it.

    Children: ``Bucket`` (created unless ``bucket`` is given): S3-managed encryption, public
    access blocked, TLS only, objects owned by the bucket owner, one lifecycle rule
    ``ExpireJobRecords`` deleting each record ``retention`` after it was written (and
    incomplete uploads after a day). No transition to a colder storage class: a record is
    about 1 KB, and S3's infrequent-access and Glacier Instant Retrieval classes bill every
    object as at least 128 KB, so moving them would cost more, not less. Kept when the stack
    is deleted (``removal_policy``): it is the only copy of what AWS Batch no longer lists.

    :param retention: how long a record is kept. Default 400 days; whole days, at least
        :data:`MIN_RETENTION_DAYS`.
    :param prefix: the key prefix of every record (each queue a folder below it). Default
        ``job-ledger/``.
    :param bucket: a bucket of yours to write to instead (its lifecycle is then yours).
    :param server_access_logs_bucket: where S3 server access logs of the created bucket go.
        Default: none (the records are derived data the monitoring writes; reads go through
        IAM, which CloudTrail records).
    :param removal_policy: what a stack deletion does to the created bucket. Default RETAIN.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        retention: Duration = DEFAULT_RETENTION,
        prefix: str = DEFAULT_PREFIX,
        bucket: s3.IBucket | None = None,
        server_access_logs_bucket: s3.IBucket | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        subject = f"job ledger {child_path(scope, id)}"
        days = retention.to_days()
        if days < MIN_RETENTION_DAYS or days != int(days):
            raise QuotaConfigError(subject, "retention", retention.to_human_string(),
                                   f"whole days, at least {MIN_RETENTION_DAYS}")
        if prefix and (not prefix.endswith("/") or prefix.startswith("/")):
            raise QuotaConfigError(subject, "prefix", prefix,
                                   "empty, or a key prefix ending in '/' (not starting with it)")
        super().__init__(scope, id)
        self.prefix: Final = prefix
        self.retention: Final = retention
        self.bucket: Final[s3.IBucket] = bucket or self._create_bucket(
            retention, server_access_logs_bucket, removal_policy)

    def _create_bucket(self, retention: Duration, logs: s3.IBucket | None,
                       removal_policy: RemovalPolicy) -> s3.Bucket:
        bucket = s3.Bucket(
            self, "Bucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=logs,
            removal_policy=removal_policy,
            lifecycle_rules=[s3.LifecycleRule(
                id="ExpireJobRecords", expiration=retention,
                abort_incomplete_multipart_upload_after=Duration.days(1),
            )],
        )
        if logs is None:
            acknowledge(
                bucket, "AwsSolutions-S1",
                "The job ledger holds job records the monitoring writes, derived from AWS "
                "Batch; who reads or writes them is decided by IAM grants and recorded by "
                "CloudTrail. Pass server_access_logs_bucket for S3 access logs as well.",
            )
        return bucket

    def variables(self) -> dict[str, str]:
        """The environment a job-events function reads the ledger's place from."""
        return {LEDGER_BUCKET_ENV: self.bucket.bucket_name, LEDGER_PREFIX_ENV: self.prefix}

    def url_of(self, queue_name: str) -> str:
        """``s3://bucket/prefix/queue/``: what ``quota-constructs usage --ledger`` takes."""
        return f"s3://{self.bucket.bucket_name}/{queue_folder(self.prefix, queue_name)}"

    def grant_write(self, grantee: iam.IGrantable) -> iam.Grant:
        """``s3:PutObject`` on the records and nothing else (and encrypting with the given
        bucket's key, when it has one)."""
        records = self.bucket.arn_for_objects(f"{self.prefix}*")
        grant = iam.Grant.add_to_principal(grantee=grantee, actions=list(WRITE_ACTIONS),
                                           resource_arns=[records])
        if self.bucket.encryption_key is not None:
            self.bucket.encryption_key.grant_encrypt(grantee)
        return grant

    def allow_function(self, role: iam.IRole) -> None:
        """Let a job-events function's role (the library's) write the records, with the
        acknowledgment of the one wildcard that takes."""
        self.grant_write(role)
        acknowledge_wildcard_resource(
            default_policy(role), self.bucket.arn_for_objects(f"{self.prefix}*"),
            "The job ledger's records: one object per terminal attempt of jobs that exist "
            "only at run time, under the ledger's prefix of the app's own bucket; PutObject "
            "only.",
        )

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """List and read the records: what ``usage --ledger`` needs."""
        return self.bucket.grant_read(grantee, f"{self.prefix}*")
