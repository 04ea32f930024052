"""The team side of a quota share: submit SageMaker training jobs into it, list them, and
change their priorities — within what the share's agreement allows (boto3 only; no aws_cdk).

```python
from quota_constructs.client import ShareClient
client = ShareClient.from_agreement("cdk.out/agreements/STACK.json", share="vision")
job_id = client.submit(job_name="resnet-42", training_job_request={...}, priority=10)
```
"""

from .agreement_file import AgreementFileError, ShareTerms, read_share_terms
from .share_client import ACTIVE_JOB_STATUSES, ShareClient, ShareJob

__all__ = [
    "ACTIVE_JOB_STATUSES",
    "AgreementFileError",
    "ShareClient",
    "ShareJob",
    "ShareTerms",
    "read_share_terms",
]
