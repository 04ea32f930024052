"""Reading and explaining a deployed queue from an operator's machine (boto3, never aws_cdk).

The console script's commands that talk to AWS Batch (``history``, ``status``, ``explain``,
``estimate``, ``preview``) keep their logic here, one module per question, with a Python API
beside the command line. Every read of Batch goes through the runtime's read layer
(``quota_constructs.runtime``), the same code the custom resource and the monitoring Lambdas use,
so a figure means the same thing on a page, in an alarm and in a terminal.
"""
