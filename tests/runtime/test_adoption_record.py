"""The adoption record: what a share was before each undoable adoption, in one tag value."""

from __future__ import annotations

from quota_constructs.model.adoption_record import AdoptionEntry, AdoptionRecord
from quota_constructs.model.tags import ADOPTED_TAG_KEY, MAX_TAG_VALUE_LENGTH

CONFIG = {
    "capacityLimits": [{"capacityUnit": "ml.g5.2xlarge", "maxCapacity": 3},
                       {"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
    "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 0},
    "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
    "state": "DISABLED",
}
LIFECYCLE = ("adopt_existing=false allow_preemption_on_shrink=true "
             "terminate_active_jobs_on_delete=true stack=0123456789abcdef0123")


def imported(by: str = "a" * 20) -> AdoptionEntry:
    return AdoptionEntry(by=by, from_resource=False, config=CONFIG,
                         tags={"team": "legacy", "quota-constructs:lifecycle": None})


def moved(by: str = "b" * 20) -> AdoptionEntry:
    return AdoptionEntry(by=by, from_resource=True, config=CONFIG,
                         tags={"team": "a", "quota-constructs:lifecycle": LIFECYCLE})


def test_a_record_reads_back_as_written_keeping_the_order_of_the_limits() -> None:
    record = AdoptionRecord((imported(), moved()))

    value = record.encode()

    assert AdoptionRecord.from_tags({ADOPTED_TAG_KEY: value}) == record
    # An import and a move (with the previous owner's lifecycle record) fit in one tag value.
    assert len(value) <= MAX_TAG_VALUE_LENGTH and record.fits
    assert set(value[2:]) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
    )


def test_an_unreadable_record_counts_as_a_share_that_existed_before_the_stack() -> None:
    record = AdoptionRecord.from_tags({ADOPTED_TAG_KEY: "1:not base64 at all"})

    assert record.damaged and record.existed_before_the_stack
    assert not AdoptionRecord().existed_before_the_stack


def test_undoing_an_adoption_drops_only_that_resources_newest_entry() -> None:
    # The resource adopted the share by hand, moved it away and is now taking it back.
    record = AdoptionRecord((imported("a" * 20), moved("a" * 20)))

    assert record.without("a" * 20) == AdoptionRecord((imported("a" * 20),))
    assert record.entry_by("a" * 20) == moved("a" * 20)


def test_a_completed_move_merges_into_the_import_it_follows() -> None:
    extra = AdoptionEntry(by="b" * 20, from_resource=True, config=CONFIG,
                          tags={"team": "a", "cost": None})
    record = AdoptionRecord((imported(), extra))

    settled = record.settled_on("b" * 20)

    assert len(settled.entries) == 1
    # What the import recorded wins; a key only the move set keeps its value from before it.
    assert settled.entries[0].tags == {
        "team": "legacy", "quota-constructs:lifecycle": None, "cost": None,
    }
    assert AdoptionRecord((moved(),)).settled_on("b" * 20) == AdoptionRecord()


def test_the_record_learns_each_key_before_the_stack_first_touches_it() -> None:
    record = AdoptionRecord((imported(),))

    covered = record.covering({"team": "b", "cost": "x"}, ["team", "cost", "owner"])

    assert covered.entries[0].tags == {
        "team": "legacy", "quota-constructs:lifecycle": None, "cost": "x", "owner": None,
    }
