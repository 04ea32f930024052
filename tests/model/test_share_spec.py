"""Rules of a single quota share, checked when the spec is built."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    CapacityLimit,
    CapacityUnit,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)

G5 = CapacityUnit.ML_G5_XLARGE


def share(**overrides: object) -> QuotaShareSpec:
    props: dict[str, object] = {
        "name": "QS1",
        "capacity_limits": [CapacityLimit(G5, 1)],
        "strategy": SharingStrategy.LEND,
    }
    props.update(overrides)
    return QuotaShareSpec(**props)  # type: ignore[arg-type]


def error_of(**overrides: object) -> QuotaConfigError:
    with pytest.raises(QuotaConfigError) as caught:
        share(**overrides)
    return caught.value


class TestBorrowLimit:
    def test_none_means_unlimited_minus_one(self) -> None:
        spec = share(strategy=SharingStrategy.LEND_AND_BORROW)
        assert spec.borrow_limit == -1

    def test_zero_means_no_borrowing_and_stays_zero(self) -> None:
        spec = share(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=0)
        assert spec.borrow_limit == 0
        assert spec.ceiling_of(G5) == 1

    def test_percentage_caps_the_ceiling(self) -> None:
        spec = share(
            strategy=SharingStrategy.LEND_AND_BORROW,
            borrow_limit_percent=200,
            capacity_limits=[CapacityLimit(G5, 2)],
        )
        assert spec.borrow_limit == 200
        assert spec.ceiling_of(G5) == 6

    @pytest.mark.parametrize("strategy", [SharingStrategy.LEND, SharingStrategy.RESERVE])
    @pytest.mark.parametrize("percent", [0, 100])
    def test_only_lend_and_borrow_may_set_it(self, strategy: SharingStrategy, percent: int) -> None:
        error = error_of(strategy=strategy, borrow_limit_percent=percent)
        assert (error.subject, error.field, error.value) == (
            "quota share 'QS1'",
            "borrow_limit_percent",
            percent,
        )
        assert "LEND_AND_BORROW" in error.allowed

    @pytest.mark.parametrize("strategy", [SharingStrategy.LEND, SharingStrategy.RESERVE])
    def test_strategies_that_cannot_borrow_send_no_borrow_limit(
        self, strategy: SharingStrategy
    ) -> None:
        assert share(strategy=strategy).borrow_limit is None

    @given(st.integers(max_value=-1))
    def test_negative_is_rejected(self, percent: int) -> None:
        error = error_of(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=percent)
        assert error.field == "borrow_limit_percent"

    @pytest.mark.parametrize("value", [True, 1.5, "200"])
    def test_non_integers_are_rejected(self, value: object) -> None:
        error = error_of(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=value)
        assert error.field == "borrow_limit_percent"
        assert error.value == value

    def test_minus_one_is_told_that_none_means_unlimited(self) -> None:
        error = error_of(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=-1)
        assert str(error) == (
            "quota share 'QS1': borrow_limit_percent got -1; allowed: None, not -1, means "
            "unlimited here (the library sends AWS Batch its -1); a whole percentage >= 0 of "
            "the share's own limit it may borrow on top, e.g. 50 (half its limit again) or 200 "
            "(twice its limit); None borrows without limit, 0 never borrows"
        )

    @pytest.mark.parametrize(("fraction", "percent"), [(0.5, "50"), (0.25, "25")])
    def test_a_fraction_is_told_it_is_a_percentage(self, fraction: float, percent: str) -> None:
        error = error_of(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=fraction)
        assert error.allowed.startswith(
            f"it is a percentage, not a fraction: {percent} for {fraction}; a whole percentage"
        )

    @pytest.mark.parametrize("value", [-5, 1.5, True])
    def test_other_mistakes_get_the_general_rule(self, value: object) -> None:
        error = error_of(strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=value)
        assert error.allowed.startswith("a whole percentage >= 0")
        assert "None borrows without limit" in error.allowed


class TestName:
    @given(st.from_regex(r"[A-Za-z0-9_-]{1,128}", fullmatch=True))
    def test_valid_names_are_accepted(self, name: str) -> None:
        assert share(name=name).name == name

    @pytest.mark.parametrize("name", ["", "has space", "dot.ted", "x" * 129, "ümlaut", None])
    def test_invalid_names_are_rejected_naming_the_field(self, name: object) -> None:
        error = error_of(name=name)
        assert (error.field, error.value) == ("name", name)
        assert "1 to 128" in error.allowed


class TestCapacityLimits:
    def test_strings_become_capacity_units(self) -> None:
        spec = share(capacity_limits=[CapacityLimit("ml.g5.2xlarge", 2)])
        assert isinstance(spec.capacity_limits[0].unit, CapacityUnit)
        assert spec.limit_of("ml.g5.2xlarge") == 2
        assert spec.limit_of("ml.g5.xlarge") == 0

    def test_unknown_instance_type_names_share_field_and_suggests(self) -> None:
        error = error_of(capacity_limits=[CapacityLimit("ml.g5.xlarg", 1)])
        assert str(error).startswith("quota share 'QS1': capacity_limits[0].unit got 'ml.g5.xlarg'")
        assert "'ml.g5.xlarge'" in error.allowed

    def test_num_instances_is_explained(self) -> None:
        error = error_of(capacity_limits=[CapacityLimit("NUM_INSTANCES", 1)])
        assert "never NUM_INSTANCES" in error.allowed

    @given(st.integers(max_value=0))
    def test_max_capacity_must_be_at_least_one(self, count: int) -> None:
        error = error_of(capacity_limits=[CapacityLimit(G5, count)])
        assert (error.field, error.value) == ("capacity_limits[0].max_capacity", count)

    @given(st.integers(min_value=6, max_value=12))
    def test_at_most_five_limits(self, count: int) -> None:
        types = [
            "ml.g5.xlarge",
            "ml.g5.2xlarge",
            "ml.g5.4xlarge",
            "ml.g5.8xlarge",
            "ml.g5.12xlarge",
            "ml.g5.16xlarge",
            "ml.g5.24xlarge",
            "ml.g5.48xlarge",
            "ml.p4d.24xlarge",
            "ml.p5.48xlarge",
            "ml.g6.xlarge",
            "ml.g6.2xlarge",
        ]
        error = error_of(capacity_limits=[CapacityLimit(t, 1) for t in types[:count]])
        assert error.field == "capacity_limits"
        assert f"({count} given)" in error.allowed

    def test_at_least_one_limit(self) -> None:
        assert error_of(capacity_limits=[]).field == "capacity_limits"

    def test_units_are_unique(self) -> None:
        error = error_of(capacity_limits=[CapacityLimit(G5, 1), CapacityLimit("ml.g5.xlarge", 2)])
        assert (error.field, error.value) == ("capacity_limits[1].unit", "ml.g5.xlarge")

    def test_tokens_are_not_validated(self) -> None:
        spec = share(capacity_limits=[CapacityLimit(G5, -1.8881545897087626e289)])  # type: ignore[arg-type]
        assert len(spec.capacity_limits) == 1


class TestOtherFields:
    def test_strategy_accepts_its_string_value(self) -> None:
        assert share(strategy="RESERVE").strategy is SharingStrategy.RESERVE

    def test_unknown_strategy(self) -> None:
        error = error_of(strategy="BORROW")
        assert error.field == "strategy"
        assert "LEND_AND_BORROW" in error.allowed

    @pytest.mark.parametrize("field", ["in_share_preemption", "enabled"])
    def test_flags_must_be_bools(self, field: str) -> None:
        assert error_of(**{field: "true"}).field == field

    def test_reserved_tag_prefix(self) -> None:
        error = error_of(tags={"aws:team": "a"})
        assert (error.field, error.value) == ("tags key", "aws:team")

    @pytest.mark.parametrize(("tags", "field", "value"), [
        ({"Aws:Team": "a"}, "tags key", "Aws:Team"),
        ({"team": "AWS:a"}, "tags['team']", "AWS:a"),
    ])
    def test_tag_restrictions_of_the_batch_guide(
        self, tags: dict[str, str], field: str, value: str
    ) -> None:
        error = error_of(tags=tags)
        assert (error.field, error.value) == (field, value)

    def test_tags_of_any_characters_are_accepted(self) -> None:
        """The guide's character list is what is "generally allowed" across services, not a
        Batch rule (botocore's model has no pattern): a comma or brackets are not refused."""
        tags = {"cost center": "équipe 42", "k+-=._:/@": "v+-=._:/@", "empty": "",
                "team<x>": "a,b"}
        assert QuotaShareSpec(name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
                              strategy=SharingStrategy.LEND, tags=tags).tags == tags

    def test_too_many_tags(self) -> None:
        assert error_of(tags={f"k{i}": "v" for i in range(51)}).field == "tags"

    def test_long_tag_value(self) -> None:
        assert error_of(tags={"team": "v" * 257}).field == "tags['team']"

    def test_capacity_unit_constructor_validates(self) -> None:
        with pytest.raises(QuotaConfigError, match=r"ml\.nope"):
            CapacityUnit("ml.nope")
        assert CapacityUnit("ml.p5.48xlarge") == "ml.p5.48xlarge"


def test_every_capacity_unit_constant_is_a_botocore_training_instance_type() -> None:
    from quota_constructs.model import training_instance_types

    constants = CapacityUnit.constants()
    assert CapacityUnit.ML_G5_XLARGE in constants
    assert set(constants) <= training_instance_types()


def test_the_instance_types_read_from_one_shape_are_what_botocore_loads() -> None:
    from botocore.loaders import create_loader

    from quota_constructs.model.capacity import _shape_enum, botocore_training_instance_types

    model = create_loader().load_service_model("sagemaker", "service-2")
    assert botocore_training_instance_types() == frozenset(
        model["shapes"]["TrainingInstanceType"]["enum"]
    )
    # A name that only appears as a reference ("shape": "...") is not mistaken for the shape,
    # and a layout the fast path does not recognise is still read right.
    tricky = b'{"shapes": {"A": {"shape": "T"}, "T": {"type": "string", "enum": ["x", "y"]}}}'
    assert _shape_enum(tricky, "T") == ["x", "y"]
    assert _shape_enum(b'{"shapes":{"T":{"type":"string","enum":["z"]}}}', "T") == ["z"]
