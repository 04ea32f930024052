"""The Lambdas: the custom resource that gives quota shares a guarded lifecycle, and the two
monitoring functions.

Standard library and boto3 only, and no ``aws_cdk``: the Lambda asset carries this package, the
model and ``quota_constructs/__init__.py``. Entry points are
``quota_constructs.runtime.quota_share_handler.on_event`` and ``.is_complete`` (custom resource),
``quota_constructs.runtime.share_metrics_handler.handler`` (scheduled per-share metrics) and
``quota_constructs.runtime.job_events_handler.handler`` (service-job events); what the
monitoring functions and their constructs agree on is :mod:`.monitoring_contract`.
"""
