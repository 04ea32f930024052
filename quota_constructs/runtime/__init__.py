"""The custom-resource Lambda that gives quota shares a guarded lifecycle.

Standard library and boto3 only, and no ``aws_cdk``: the Lambda asset carries this package, the
model and ``quota_constructs/__init__.py``. Entry points are
``quota_constructs.runtime.quota_share_handler.on_event`` and ``.is_complete``.
"""
