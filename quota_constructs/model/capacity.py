"""Capacity units (SageMaker training instance types) and capacity limits."""

from __future__ import annotations

import difflib
import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

from .errors import QuotaConfigError
from .tokens import is_unresolved

MAX_CAPACITY_LIMITS = 5


TRAINING_INSTANCE_TYPES_FILE = "training_instance_types.json"
"""Present next to this module only in a Lambda asset: the synthesizing botocore's list."""


@lru_cache(maxsize=1)
def training_instance_types() -> frozenset[str]:
    """Every instance type SageMaker Training accepts, as the botocore the app is built with knows.

    Read from botocore's SageMaker model rather than kept by hand, so a new instance type is
    accepted as soon as botocore ships it. Only the service JSON is loaded (no client). A Lambda
    of this library re-parses its properties through this model, but its runtime's botocore may
    be older than the one that accepted the declaration: its asset therefore carries the list
    (:data:`TRAINING_INSTANCE_TYPES_FILE`), which is used instead, so both sides agree.
    """
    staged = Path(__file__).with_name(TRAINING_INSTANCE_TYPES_FILE)
    if staged.is_file():
        return frozenset(json.loads(staged.read_text(encoding="utf-8")))
    return botocore_training_instance_types()


def botocore_training_instance_types() -> frozenset[str]:
    """The installed botocore's SageMaker ``TrainingInstanceType`` enum.

    Read from botocore's own data (the latest API version, as botocore's loader picks it), so
    the list depends on the installed botocore alone, like the service models the Lambda
    assets carry. Only that one shape is decoded: botocore's loader would import urllib3 and
    parse the whole 2.6 MB SageMaker model, a tenth of the library's synth time.
    """
    import botocore  # the package only; its loader is what this avoids

    service_root = Path(botocore.__file__).resolve().parent / "data" / "sagemaker"
    for version in sorted((p for p in service_root.iterdir() if p.is_dir()), reverse=True):
        plain = version / "service-2.json"
        packed = plain.with_name(plain.name + ".gz")
        if plain.is_file():
            return frozenset(_shape_enum(plain.read_bytes(), "TrainingInstanceType"))
        if packed.is_file():
            raw = gzip.decompress(packed.read_bytes())
            return frozenset(_shape_enum(raw, "TrainingInstanceType"))
    raise LookupError(f"botocore {botocore.__version__} has no SageMaker service model")


def _shape_enum(model: bytes, shape: str) -> list[str]:
    """The ``enum`` of ``shape`` in a botocore service model, decoding only that shape."""
    decoder = json.JSONDecoder()
    key = f'"{shape}"'.encode()
    start = model.find(key)
    while start >= 0:
        rest = model[start + len(key):start + len(key) + 64].lstrip()
        if rest.startswith(b":") and rest[1:].lstrip().startswith(b"{"):
            brace = model.index(b"{", start + len(key))
            # A shape is a small object; the slice only has to hold it whole.
            text = model[brace:brace + 1_000_000].decode("utf-8", errors="replace")
            value, _ = decoder.raw_decode(text)
            if isinstance(value, dict) and isinstance(value.get("enum"), list):
                return [str(item) for item in value["enum"]]
        start = model.find(key, start + 1)
    shapes = json.loads(model)["shapes"]  # an unexpected layout: the slow, certain way
    return [str(item) for item in shapes[shape]["enum"]]


# Units already known to be valid: the CapacityUnit constants (a test checks each against
# botocore) and every unit validated since. Loading botocore's SageMaker model costs about a
# tenth of a second, which a declaration using only the constants need not pay.
_VALID_UNITS: set[str] = set()


def describe_unit_problem(value: object) -> str | None:
    """Why ``value`` is not a usable capacity unit, or None when it is."""
    if not isinstance(value, str):
        return "a SageMaker training instance type as a string, such as 'ml.g5.xlarge'"
    if value in _VALID_UNITS:
        return None
    if value in training_instance_types():
        _VALID_UNITS.add(value)
        return None
    if value == "NUM_INSTANCES":
        return (
            "a SageMaker training instance type such as 'ml.g5.xlarge'; quota management "
            "sizes capacity in instance types, never NUM_INSTANCES"
        )
    close = difflib.get_close_matches(value, sorted(training_instance_types()), n=3)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    return f"a SageMaker training instance type known to botocore, such as 'ml.g5.xlarge'{hint}"


class CapacityUnit(str):
    """A SageMaker training instance type used as a unit of quota capacity.

    Constants cover common GPU types; any other training instance type is accepted when
    botocore's SageMaker model lists it::

        CapacityUnit.ML_G5_XLARGE
        CapacityUnit("ml.p5.48xlarge")
    """

    ML_G5_XLARGE: ClassVar[CapacityUnit]
    ML_G5_2XLARGE: ClassVar[CapacityUnit]
    ML_G5_12XLARGE: ClassVar[CapacityUnit]
    ML_G5_48XLARGE: ClassVar[CapacityUnit]
    ML_G6_XLARGE: ClassVar[CapacityUnit]
    ML_G6_12XLARGE: ClassVar[CapacityUnit]
    ML_P4D_24XLARGE: ClassVar[CapacityUnit]
    ML_P5_48XLARGE: ClassVar[CapacityUnit]
    ML_TRN1_32XLARGE: ClassVar[CapacityUnit]

    __slots__ = ()

    def __new__(cls, instance_type: str) -> CapacityUnit:
        if not is_unresolved(instance_type):
            problem = describe_unit_problem(instance_type)
            if problem is not None:
                raise QuotaConfigError("capacity unit", "instance_type", instance_type, problem)
        return super().__new__(cls, instance_type)

    @classmethod
    def _known(cls, instance_type: str) -> CapacityUnit:
        """A unit that is a constant or was validated already: no botocore lookup."""
        _VALID_UNITS.add(instance_type)
        return str.__new__(cls, instance_type)

    @classmethod
    def constants(cls) -> tuple[CapacityUnit, ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, CapacityUnit))

    def __repr__(self) -> str:
        return f"CapacityUnit({str(self)!r})"


CapacityUnit.ML_G5_XLARGE = CapacityUnit._known("ml.g5.xlarge")
CapacityUnit.ML_G5_2XLARGE = CapacityUnit._known("ml.g5.2xlarge")
CapacityUnit.ML_G5_12XLARGE = CapacityUnit._known("ml.g5.12xlarge")
CapacityUnit.ML_G5_48XLARGE = CapacityUnit._known("ml.g5.48xlarge")
CapacityUnit.ML_G6_XLARGE = CapacityUnit._known("ml.g6.xlarge")
CapacityUnit.ML_G6_12XLARGE = CapacityUnit._known("ml.g6.12xlarge")
CapacityUnit.ML_P4D_24XLARGE = CapacityUnit._known("ml.p4d.24xlarge")
CapacityUnit.ML_P5_48XLARGE = CapacityUnit._known("ml.p5.48xlarge")
CapacityUnit.ML_TRN1_32XLARGE = CapacityUnit._known("ml.trn1.32xlarge")


@dataclass(frozen=True)
class CapacityLimit:
    """At most ``max_capacity`` instances of ``unit``.

    Checked where it is used (a quota share or a service environment), so that an error can
    name the share it belongs to.
    """

    unit: CapacityUnit | str
    max_capacity: int

    @property
    def capacity_unit(self) -> str:
        return str(self.unit)


def validate_capacity_limits(
    limits: Sequence[CapacityLimit], *, subject: str, field: str = "capacity_limits"
) -> tuple[CapacityLimit, ...]:
    """Check 1–5 limits with distinct instance-type units and ``max_capacity >= 1``.

    Returns the limits with every unit as a :class:`CapacityUnit`.
    """
    if isinstance(limits, (str, bytes)) or not isinstance(limits, Sequence):
        raise QuotaConfigError(subject, field, limits, "a list of CapacityLimit")
    if not 1 <= len(limits) <= MAX_CAPACITY_LIMITS:
        raise QuotaConfigError(
            subject,
            field,
            [_show(limit) for limit in limits],
            f"between 1 and {MAX_CAPACITY_LIMITS} capacity limits ({len(limits)} given)",
        )
    checked: list[CapacityLimit] = []
    seen: set[str] = set()
    for index, limit in enumerate(limits):
        where = f"{field}[{index}]"
        if not isinstance(limit, CapacityLimit):
            raise QuotaConfigError(subject, where, limit, "a CapacityLimit(unit, max_capacity)")
        unit = limit.unit
        if not is_unresolved(unit):
            problem = describe_unit_problem(unit)
            if problem is not None:
                raise QuotaConfigError(subject, f"{where}.unit", unit, problem)
            if unit in seen:
                raise QuotaConfigError(
                    subject, f"{where}.unit", unit, "each capacity unit at most once"
                )
            seen.add(unit)
        # The message names the instance type: an index alone sends the reader counting.
        of = "" if is_unresolved(unit) else (
            f" of {unit} (for none of it, leave {unit} out of {field})")
        check_count(limit.max_capacity, subject=subject, field=f"{where}.max_capacity",
                    minimum=1, of=of)
        checked.append(
            limit
            if isinstance(unit, CapacityUnit)
            else CapacityLimit(CapacityUnit._known(unit), limit.max_capacity)
        )
    return tuple(checked)


def check_count(
    value: object, *, subject: str, field: str, minimum: int, maximum: int | None = None,
    of: str = "",
) -> None:
    """An integer (not a bool) within ``minimum``..``maximum``; tokens pass unchecked. ``of``
    follows the range in the message (what is counted)."""
    if is_unresolved(value):
        return
    span = (f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}") + of
    if isinstance(value, bool) or not isinstance(value, int):
        raise QuotaConfigError(subject, field, value, f"an integer {span}")
    if value < minimum or (maximum is not None and value > maximum):
        raise QuotaConfigError(subject, field, value, f"an integer {span}")


def _show(limit: object) -> object:
    if isinstance(limit, CapacityLimit):
        return f"{limit.unit}:{limit.max_capacity}"
    return limit
