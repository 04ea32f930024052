"""The tags by which the runtime recognises the shares one custom resource manages.

Repeated delivery of a Create, and the rollback of a rename, find a share of the declared name
already on the queue. Only a share carrying this resource's owner marker is taken over silently;
any other needs ``adopt_existing``. The marker ties a share to one CloudFormation resource
(stack id + logical id): a stack recreated under the same name gets a new stack id and
therefore does not silently take over what a previous stack left behind.

A share adopted with ``adopt_existing`` first carries the marker under a separate key, and gets
the owner key only once the adopting deployment step has finished (VALID with the declared
configuration). If that step fails, CloudFormation rolls the create back by deleting the
resource; a share still only *being adopted* by this resource is then released, not deleted:
it existed before the stack and must not be lost because the stack could not take it over.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

OWNER_TAG_KEY = "quota-constructs:owner"
ADOPTING_TAG_KEY = "quota-constructs:adopting"
MARKER_TAG_KEYS = frozenset({OWNER_TAG_KEY, ADOPTING_TAG_KEY})


def owner_marker(stack_id: str, logical_resource_id: str) -> str:
    """A short, stable, non-reversible marker for one custom resource."""
    digest = hashlib.sha256(f"{stack_id}\n{logical_resource_id}".encode()).hexdigest()
    return digest[:20]


def is_owned(tags: Mapping[str, str], marker: str) -> bool:
    return tags.get(OWNER_TAG_KEY) == marker


def is_adoption_pending(tags: Mapping[str, str], marker: str) -> bool:
    """The resource started adopting this pre-existing share but never finished doing so."""
    return tags.get(ADOPTING_TAG_KEY) == marker and not is_owned(tags, marker)
