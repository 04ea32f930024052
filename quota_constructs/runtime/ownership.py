"""The tag by which the runtime recognises a share that one custom resource already manages.

Repeated delivery of a Create, and the rollback of a rename, find a share of the declared name
already on the queue. Only a share carrying this resource's marker is taken over silently;
any other needs ``adopt_existing``. The marker ties a share to one CloudFormation resource
(stack id + logical id): a stack recreated under the same name gets a new stack id and
therefore does not silently take over what a previous stack left behind.
"""

from __future__ import annotations

import hashlib

OWNER_TAG_KEY = "quota-constructs:owner"


def owner_marker(stack_id: str, logical_resource_id: str) -> str:
    """A short, stable, non-reversible marker for one custom resource."""
    digest = hashlib.sha256(f"{stack_id}\n{logical_resource_id}".encode()).hexdigest()
    return digest[:20]
