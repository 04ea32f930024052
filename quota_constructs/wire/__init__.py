"""The contract room: what the constructs, the Lambdas, the live commands, the emulator and the
simulator's inputs must agree on, in pure Python (no ``aws_cdk``, no boto3; only the model).

- :mod:`.custom_resource`: the custom resource's type, property names, tag budget and the
  wait-budget settings the provider passes its functions;
- :mod:`.share_codec`: one quota share in every form AWS sees it (CloudFormation properties,
  Batch API request, Batch API answer), "unlimited borrow" translated in one place;
- :mod:`.share_config` / :mod:`.live_share`: a share's configuration and a live share as read back;
- :mod:`.share_arn`: the one parser and builder of quota-share and job-queue ARNs;
- :mod:`.deployed_config`: the fingerprint of what a deployment declared, recorded on the share;
- :mod:`.monitoring_declaration` / :mod:`.monitoring_contract`: what the monitoring construct
  hands its Lambdas and the metric names both sides read;
- :mod:`.listing`: how much of a Batch listing one reader takes;
- :mod:`.training_request`: how long one attempt of a service job may run (its SageMaker
  request's ``MaxRuntimeInSeconds``), for the emulator and the live start estimate.

Nothing is re-exported here: each name has one home, and files of this folder import each
other directly, so no file depends on this one.
"""
