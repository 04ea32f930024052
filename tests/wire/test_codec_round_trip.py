"""The one share codec round-trips every field of random declarations through all its forms.

spec → CloudFormation properties → stringified (as CloudFormation hands them over) → spec, and
spec → API request (checked against botocore's own CreateQuotaShare shape) → API answer
(DescribeQuotaShare's shape) → spec; borrow limits None (unlimited), 0 and N, disabled shares
and every switch included."""

from __future__ import annotations

from typing import Any

import botocore.session
from botocore.validate import ParamValidator
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn, quota_share_arn
from quota_constructs.wire.share_codec import (
    api_configuration,
    resource_properties,
    spec_from_properties,
)
from quota_constructs.wire.share_config import Casing, ShareConfig, recased

from .test_share_codec import UNITS, stringify, tag_values

QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
BATCH = botocore.session.get_session().get_service_model("batch")


@st.composite
def declarations(draw: st.DrawFn) -> QuotaShareSpec:
    strategy = draw(st.sampled_from(list(SharingStrategy)))
    units = draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=5, unique=True))
    # None (unlimited), 0 (never borrow) and N are each drawn often, not left to chance.
    borrow = draw(st.one_of(st.none(), st.just(0), st.integers(1, 1000)))
    return QuotaShareSpec(
        name=draw(st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True)),
        capacity_limits=[CapacityLimit(u, draw(st.integers(1, 10_000))) for u in units],
        strategy=strategy,
        borrow_limit_percent=borrow if strategy.borrows else None,
        in_share_preemption=draw(st.booleans()),
        enabled=draw(st.booleans()),
        tags=draw(st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,11}", fullmatch=True),
                                  tag_values(12), max_size=4)),
    )


def describe_answer(spec: QuotaShareSpec) -> dict[str, Any]:
    """What DescribeQuotaShare answers for the share CreateQuotaShare made from the request."""
    request = create_request(spec)
    return {
        "quotaShareName": request["quotaShareName"],
        "quotaShareArn": quota_share_arn(QUEUE_ARN, spec.name),
        "jobQueueArn": QUEUE_ARN,
        **{key: request[key] for key in ("capacityLimits", "resourceSharingConfiguration",
                                         "preemptionConfiguration", "state")},
        "status": "VALID",
        "tags": request.get("tags", {}),
    }


def create_request(spec: QuotaShareSpec) -> dict[str, Any]:
    request = {"quotaShareName": spec.name, "jobQueue": QUEUE_ARN, **api_configuration(spec)}
    if spec.tags:
        request["tags"] = dict(spec.tags)
    return request


@given(declarations())
def test_cloudformation_properties_round_trip(spec: QuotaShareSpec) -> None:
    properties = resource_properties(spec, QUEUE_ARN)
    assert spec_from_properties(properties) == (spec, QUEUE_ARN)
    assert spec_from_properties(stringify(properties)) == (spec, QUEUE_ARN)


@given(declarations())
def test_api_request_and_answer_round_trip(spec: QuotaShareSpec) -> None:
    request = create_request(spec)
    input_shape = BATCH.operation_model("CreateQuotaShare").input_shape
    assert not ParamValidator().validate(request, input_shape).has_errors()
    output_shape = BATCH.operation_model("DescribeQuotaShare").output_shape
    answer = describe_answer(spec)
    assert not ParamValidator().validate(answer, output_shape).has_errors()

    live = LiveShare.from_api(answer)
    assert live.config == ShareConfig.declared(spec)
    assert live.config.spec(live.name, live.tags) == spec
    assert QuotaShareArn.parse(live.arn) == QuotaShareArn(live.arn, QUEUE_ARN, "training",
                                                          spec.name)


@given(declarations())
def test_both_casings_carry_the_same_values(spec: QuotaShareSpec) -> None:
    config = ShareConfig.declared(spec)
    properties = resource_properties(spec, QUEUE_ARN)
    assert {key: properties[key] for key in config.fields(Casing.CLOUDFORMATION)} == (
        config.fields(Casing.CLOUDFORMATION))
    assert recased(api_configuration(spec), Casing.CLOUDFORMATION) == (
        config.fields(Casing.CLOUDFORMATION))
    assert recased(api_configuration(spec), Casing.API) == config.fields(Casing.API)


@given(declarations(), declarations())
def test_update_fields_turn_one_configuration_into_the_other(
    before: QuotaShareSpec, after: QuotaShareSpec
) -> None:
    old, new = ShareConfig.declared(before), ShareConfig.declared(after)
    fields = old.update_fields(new)
    assert ShareConfig.from_api({**old.api_fields(), **fields}) == new
    assert new.shows(fields)
    assert (fields == {}) == (old == new)

