"""The runtime tests' fake Batch and fake SNS, for running the handlers a template names."""

from ..monitoring_runtime.conftest import (  # noqa: F401 - fixtures, used by name
    fake_batch_server,
    fake_sns_server,
    monitor,
)
