"""Deployable stacks built from quota_constructs: the reference example, one quota stack per
deployment environment, and a platform/team composition example."""
