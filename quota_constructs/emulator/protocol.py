"""AWS Batch's REST-JSON protocol, read from botocore's own service model.

Routes (method and URI template), where each request member travels (URI, query string,
body), what a request must hold (required members, types, enums, lengths and ranges) and what
a response may hold all come from the ``batch`` model botocore ships; nothing here lists an
operation's fields by hand. Errors are rendered as AWS renders them for rest-json (HTTP 400,
``x-amzn-ErrorType`` and a ``{"message"}`` body), which botocore turns into a ``ClientError``
with the same code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

import botocore.session
from botocore.model import OperationModel, Shape, StructureShape

CLIENT_EXCEPTION = "ClientException"


class ApiError(Exception):
    """A request AWS Batch would refuse: ``code`` and a one-line ``message``."""

    def __init__(self, message: str, code: str = CLIENT_EXCEPTION, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


def bad_value(field: str, value: object, allowed: str) -> ApiError:
    """A ClientException naming the field, the value received and what is allowed."""
    return ApiError(f"{field}: {value!r} is not valid; expected {allowed}")


@dataclass(frozen=True)
class Route:
    operation: OperationModel
    pattern: re.Pattern[str]


class BatchProtocol:
    """Routes, parses and renders requests of the ``batch`` service model."""

    def __init__(self) -> None:
        self.model = botocore.session.get_session().get_service_model("batch")
        self._routes: dict[str, list[Route]] = {}
        for name in self.model.operation_names:
            operation = self.model.operation_model(name)
            method = operation.http["method"]
            path = operation.http["requestUri"].split("?", 1)[0]
            pattern = "".join(
                f"(?P<{part[1:-1].rstrip('+')}>[^/]+)" if part.startswith("{") else re.escape(part)
                for part in re.split(r"(\{\w+\+?\})", path)
            )
            self._routes.setdefault(method, []).append(
                Route(operation, re.compile(pattern + "/?$"))
            )

    def route(self, method: str, path: str) -> tuple[OperationModel, dict[str, str]] | None:
        for route in self._routes.get(method, ()):
            match = route.pattern.match(path)
            if match is not None:
                return route.operation, {k: unquote(v) for k, v in match.groupdict().items()}
        return None

    def parse(
        self, operation: OperationModel, labels: Mapping[str, str], query: str, body: bytes
    ) -> dict[str, Any]:
        """The request's parameters, checked against the operation's input shape."""
        shape = operation.input_shape
        params = json_object(body)
        if shape is None:
            return params
        given = parse_qs(query, keep_blank_values=True)
        for name, member in shape.members.items():
            location = member.serialization.get("location")
            wire = member.serialization.get("name", name)
            if location == "uri" and wire in labels:
                params[name] = labels[wire]
            elif location == "querystring" and wire in given:
                values = given[wire]
                params[name] = values if member.type_name == "list" else _scalar(
                    member, values[0]
                )
        check(params, shape, "")
        return params

    def render(self, operation: OperationModel, result: Mapping[str, Any]) -> bytes:
        """The response body: ``result`` keeps only what the output shape holds."""
        shape = operation.output_shape
        if shape is None:
            return b"{}"
        return json.dumps(_shaped(result, shape)).encode()

    @staticmethod
    def error(error: ApiError) -> tuple[int, dict[str, str], bytes]:
        headers = {"x-amzn-ErrorType": error.code, "Content-Type": "application/json"}
        return error.status, headers, json.dumps({"message": error.message}).encode()


def _scalar(shape: Shape, text: str) -> Any:
    if shape.type_name in ("integer", "long"):
        try:
            return int(text)
        except ValueError:
            return text
    if shape.type_name == "boolean":
        return text == "true"
    return text


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "long": (int,), "boolean": (bool,),
    "double": (int, float), "float": (int, float), "list": (list,), "map": (dict,),
    "structure": (dict,), "timestamp": (int, float, str),
}


def check(value: Any, shape: Shape, where: str) -> None:
    """What botocore checks before sending, and what it leaves to the service: enums, maxima
    and minima. Every failure is one ClientException naming the member and the value."""
    field = where or shape.name
    allowed = _TYPES.get(shape.type_name)
    if allowed is not None and (
        not isinstance(value, allowed)
        or (shape.type_name != "boolean" and isinstance(value, bool))
    ):
        raise bad_value(field, value, f"a {shape.type_name}")
    metadata = shape.metadata
    if shape.type_name in ("integer", "long", "double", "float"):
        if "min" in metadata and value < metadata["min"]:
            raise bad_value(field, value, f"a number >= {metadata['min']}")
        if "max" in metadata and value > metadata["max"]:
            raise bad_value(field, value, f"a number <= {metadata['max']}")
    elif shape.type_name in ("string", "list", "map"):
        if "min" in metadata and len(value) < metadata["min"]:
            raise bad_value(field, value, f"a length >= {metadata['min']}")
        if "max" in metadata and len(value) > metadata["max"]:
            raise bad_value(field, value, f"a length <= {metadata['max']}")
    enum = getattr(shape, "enum", None)
    if shape.type_name == "string" and enum and value not in enum:
        raise bad_value(field, value, "one of " + ", ".join(enum))
    if isinstance(shape, StructureShape):
        for name in shape.required_members:
            if value.get(name) is None:
                raise ApiError(f"{_join(where, name)}: a value is required")
        for name, item in value.items():
            member = shape.members.get(name)
            if member is None:
                raise bad_value(_join(where, name), item, "no such member "
                                f"(known: {', '.join(shape.members)})")
            if item is not None:
                check(item, member, _join(where, name))
    elif shape.type_name == "list":
        for index, item in enumerate(value):
            check(item, shape.member, f"{field}[{index}]")
    elif shape.type_name == "map":
        for key, item in value.items():
            check(key, shape.key, f"{field} key")
            check(item, shape.value, f"{field}[{key!r}]")


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _shaped(value: Any, shape: Shape) -> Any:
    if isinstance(shape, StructureShape):
        return {
            name: _shaped(item, shape.members[name])
            for name, item in value.items()
            if item is not None and name in shape.members
        }
    if shape.type_name == "list":
        return [_shaped(item, shape.member) for item in value]
    if shape.type_name == "map":
        return {k: _shaped(v, shape.value) for k, v in value.items()}
    return value


def json_object(body: bytes) -> dict[str, Any]:
    """A request body as a JSON object (empty body: ``{}``); anything else is a ClientException.
    Batch's operations and the control API read their bodies alike."""
    if not body.strip():
        return {}
    try:
        loaded = json.loads(body)
    except ValueError:
        raise ApiError("the request body is not valid JSON") from None
    if not isinstance(loaded, dict):
        raise ApiError("the request body must be a JSON object")
    return loaded
