"""Let CloudWatch alarms publish to the SNS topics they notify, and use the topics' keys.

A topic policy *replaces* SNS's default policy, so an alarm whose topic has a policy (every
topic CDK gives ``enforce_ssl``) can publish only if that policy allows
``cloudwatch.amazonaws.com`` to. An encrypted topic additionally needs its key's policy to let
CloudWatch use the key (SNS developer guide, "Enable compatibility between event sources from
AWS services and encrypted topics"). Both grants carry the confused-deputy conditions AWS
documents for service principals: ``aws:SourceAccount`` (this account) and ``aws:SourceArn``
(alarms of this stack: CloudFormation names an alarm without ``AlarmName``
``<stack name>-<logical id>-<suffix>``, so the stack name is the narrowest prefix known at
synth).

A topic the app does not define (``sns.Topic.from_topic_arn``) cannot be changed from here:
a synth warning (:data:`IMPORTED_TOPIC_WARNING_ID`) says what its owner must add, exactly
:func:`alarm_publish_statement` and :func:`alarm_key_statement`. Likewise a topic the app
defines with a key it does not (``kms.Key.from_key_arn``, ``kms.Alias.from_alias_name``): its
key policy cannot be changed here, and an AWS managed key (``alias/aws/sns``) can never be given
the statement, so AWS-service publishers such as CloudWatch alarms cannot use it at all. A
synth warning (:data:`UNMANAGED_KEY_WARNING_ID`) names the topic, the key and what to do.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Annotations, ArnFormat, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import IConstruct

CLOUDWATCH_PRINCIPAL: Final = "cloudwatch.amazonaws.com"
IMPORTED_TOPIC_WARNING_ID: Final = "quota_constructs:alarm-topic-not-managed"
UNMANAGED_KEY_WARNING_ID: Final = "quota_constructs:alarm-topic-key-not-managed"
AWS_MANAGED_ALIAS_PREFIX: Final = "alias/aws/"
KEY_ACTIONS: Final = ("kms:Decrypt", "kms:GenerateDataKey*")


def alarm_source_arn(stack: Stack) -> str:
    """The ARN pattern of this stack's alarms (every alarm of the account and region when
    the stack's name is not known at synth)."""
    name = stack.stack_name
    pattern = "*" if Token.is_unresolved(name) else f"{name}-*"
    return stack.format_arn(service="cloudwatch", resource="alarm", resource_name=pattern,
                            arn_format=ArnFormat.COLON_RESOURCE_NAME)


def _conditions(stack: Stack) -> dict[str, dict[str, str]]:
    return {
        "StringEquals": {"aws:SourceAccount": stack.account},
        "ArnLike": {"aws:SourceArn": alarm_source_arn(stack)},
    }


def alarm_publish_statement(topic_arn: str, stack: Stack) -> iam.PolicyStatement:
    """The topic-policy statement letting this stack's alarms publish to ``topic_arn``."""
    return iam.PolicyStatement(
        principals=[iam.ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
        actions=["sns:Publish"],
        resources=[topic_arn],
        conditions=_conditions(stack),
    )


def alarm_key_statement(stack: Stack) -> iam.PolicyStatement:
    """The key-policy statement letting this stack's alarms use a topic's key."""
    return iam.PolicyStatement(
        principals=[iam.ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
        actions=list(KEY_ACTIONS),
        # In a key policy "*" means this key.
        resources=["*"],
        conditions=_conditions(stack),
    )


def allow_alarms_to_publish(topic: sns.ITopic, alarms_scope: IConstruct) -> bool:
    """Grant the alarms of ``alarms_scope``'s stack publishing on ``topic`` (and its key).

    Returns False, after a synth warning naming what to add, when the topic is not defined in
    this app and so its policies cannot be changed here.
    """
    stack = Stack.of(alarms_scope)
    added = topic.add_to_resource_policy(alarm_publish_statement(topic.topic_arn, stack))
    if not added.statement_added:
        Annotations.of(alarms_scope).add_warning_v2(
            IMPORTED_TOPIC_WARNING_ID,
            f"Topic {topic.topic_arn} is not defined in this app, so its policy cannot be "
            "changed here: CloudWatch alarms can publish to it only if its topic policy allows "
            f"{CLOUDWATCH_PRINCIPAL} sns:Publish (conditions aws:SourceAccount = this account, "
            f"aws:SourceArn like {stack.stack_name}'s alarms) and, if it is encrypted, its key "
            "policy allows the same principal kms:Decrypt and kms:GenerateDataKey* under the "
            "same conditions (README, 'Alarm delivery').",
        )
        return False
    key = topic.master_key if isinstance(topic, sns.Topic) else None
    if key is None:
        return True
    added_to_key = key.add_to_resource_policy(alarm_key_statement(stack), allow_no_op=True)
    if not added_to_key.statement_added:
        Annotations.of(alarms_scope).add_warning_v2(
            UNMANAGED_KEY_WARNING_ID, _unmanaged_key_text(topic, key, stack))
        return False
    return True


def key_reference(key: kms.IKey) -> str:
    """How people recognise a key: its alias name, else its ARN (or the token's text)."""
    alias = getattr(key, "alias_name", None)
    if isinstance(alias, str) and not Token.is_unresolved(alias):
        return alias
    return key.key_arn


def _unmanaged_key_text(topic: sns.ITopic, key: kms.IKey, stack: Stack) -> str:
    reference = key_reference(key)
    where = f"Topic {topic.node.path} is encrypted with {reference}"
    if reference.startswith(AWS_MANAGED_ALIAS_PREFIX) or f":{AWS_MANAGED_ALIAS_PREFIX}" in (
        reference
    ):
        return (
            f"{where}, an AWS managed key whose policy no one can change: CloudWatch alarms "
            "cannot publish to it (AWS-service publishers need a customer managed key whose "
            "policy allows them). Encrypt the topic with a customer managed key (kms.Key) "
            "defined in this app, which then gets the grant, or with one whose policy allows "
            f"{CLOUDWATCH_PRINCIPAL} kms:Decrypt and kms:GenerateDataKey* (README, 'Alarm "
            "delivery')."
        )
    return (
        f"{where}, a key not defined in this app, so its policy cannot be changed here: "
        f"CloudWatch alarms can publish to the topic only if the key's policy allows "
        f"{CLOUDWATCH_PRINCIPAL} kms:Decrypt and kms:GenerateDataKey* (conditions "
        f"aws:SourceAccount = this account, aws:SourceArn like {stack.stack_name}'s alarms). "
        "Add that statement to the key's policy, or encrypt the topic with a customer managed "
        "key defined in this app (README, 'Alarm delivery')."
    )

