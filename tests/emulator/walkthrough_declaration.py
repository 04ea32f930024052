"""The AWS walkthrough's queue (seeds/001): three shares of one ml.g5.xlarge in an environment
of three. QS1 LEND_AND_BORROW (borrow 200 %, in-share preemption), QS2 LEND, QS3 RESERVE."""

from quota_constructs import CapacityLimit, CapacityUnit, QuotaShareSpec, SharingStrategy

G5 = CapacityUnit.ML_G5_XLARGE

WALKTHROUGH = {
    "capacity_limits": [CapacityLimit(G5, 3)],
    "shares": [
        QuotaShareSpec(name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
                       in_share_preemption=True),
        QuotaShareSpec(name="QS2", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND),
        QuotaShareSpec(name="QS3", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.RESERVE),
    ],
}
