"""The API's filter layer: query parameters are checked here once, for every list endpoint.

A list view declares what it may be filtered by (``query_filters``); the
shared backend parses each parameter by its type (an id is a whole number a
database key can hold, text has a length bound) and answers 400 naming the
parameter otherwise. Pagination has a maximum page size and refuses a limit or
offset that is not a whole number in range. Before this, ``?snapshot=abc``,
``?snapshot=<23 digits>`` and ``?limit=<21 digits>`` each reached the database
and came back as a 500.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.pagination import LimitOffsetPagination

# The largest primary key / offset a 64-bit signed database column holds (PostgreSQL bigint, SQLite INTEGER).
MAX_DB_INTEGER = 2**63 - 1
DEFAULT_MAX_PAGE_SIZE = 1000
MAX_TEXT_FILTER_CHARS = 500


def query_int(params: Mapping[str, str], name: str, *, minimum: int = 0, maximum: int = MAX_DB_INTEGER,
              default: int | None = None) -> int | None:
    """A whole-number query parameter in ``[minimum, maximum]``; ``default`` when absent or empty.

    Raises DRF's ValidationError (a 400) naming the parameter and the range.
    """
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    text = str(raw).strip()
    # ASCII digits only, and a bounded length before int(): "１２" or ten thousand digits are not ids.
    digits = text[1:] if text[:1] == "-" else text
    if not digits.isascii() or not digits.isdigit() or len(digits) > 19:
        raise ValidationError({name: [f"must be a whole number from {minimum} to {maximum}; got {text[:40]!r}"]})
    value = int(text)
    if not minimum <= value <= maximum:
        raise ValidationError({name: [f"must be a whole number from {minimum} to {maximum}; got {value}"]})
    return value


TRUE_WORDS = ("true", "1")
FALSE_WORDS = ("false", "0")


def query_bool(params: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    """A yes/no query parameter: "true"/"1" or "false"/"0" (``default`` when absent or empty).

    Anything else ("null", "yes", "maybe") is a 400 naming the parameter, never read as false.
    """
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    text = str(raw).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ValidationError({name: [f"must be true or false (or 1 or 0); got {str(raw)[:40]!r}"]})


def number_parameter(name: str, *, minimum: float, maximum: float, description: str = "", many: bool = False,
                     kind: str = "integer") -> OpenApiParameter:
    """A query parameter declared with the range its parser accepts, so the schema is the contract:
    a schema-valid value is never refused as out of range."""
    schema: dict[str, Any] = {"type": kind, "minimum": minimum, "maximum": maximum}
    if many:  # drf-spectacular's many=True takes only a plain type: the array is written out
        schema = {"type": "array", "items": schema}
    return OpenApiParameter(name, schema, description=description, explode=True if many else None)


def id_parameter(name: str, *, description: str = "", many: bool = False) -> OpenApiParameter:
    """A query parameter naming a database id: a whole number from 1 to the largest key a column holds."""
    return number_parameter(name, minimum=1, maximum=MAX_DB_INTEGER, description=description, many=many)


def declare_path_id_ranges(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular hook: every integer path parameter (``<int:pk>``) is an id from 1 to MAX_DB_INTEGER.

    Django's URL converter takes no sign, so a negative id never reaches a view (a JSON 404), and a key past
    the column's range cannot exist; the schema says so instead of inviting both.
    """
    for path in (result.get("paths") or {}).values():
        for operation in path.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                schema = parameter.get("schema") or {}
                if parameter.get("in") == "path" and schema.get("type") == "integer":
                    schema.setdefault("minimum", 1)
                    schema.setdefault("maximum", MAX_DB_INTEGER)
    return result


def query_text(params: Mapping[str, str], name: str, *, max_length: int = MAX_TEXT_FILTER_CHARS) -> str | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    if len(raw) > max_length or "\x00" in raw:
        raise ValidationError({name: [f"must be text of at most {max_length} characters without NUL"]})
    return raw


@dataclass(frozen=True)
class IdFilter:
    """``?<param>=<id>`` filters ``<field>`` (default: the parameter's name) by a database id."""

    field: str = ""
    kind: str = "id"

    def parse(self, params: Mapping[str, str], name: str) -> Any:
        return query_int(params, name, minimum=1)


@dataclass(frozen=True)
class TextFilter:
    """``?<param>=<text>`` filters ``<field>`` (default: the parameter's name) by equal text."""

    field: str = ""
    kind: str = "text"
    max_length: int = MAX_TEXT_FILTER_CHARS

    def parse(self, params: Mapping[str, str], name: str) -> Any:
        return query_text(params, name, max_length=self.max_length)


class QueryFilterBackend(BaseFilterBackend):
    """Applies a view's ``query_filters`` ({param: IdFilter() | TextFilter()}) after checking each value."""

    def filter_queryset(self, request, queryset: QuerySet, view) -> QuerySet:
        filters: Mapping[str, IdFilter | TextFilter] = getattr(view, "query_filters", {}) or {}
        lookups = {}
        for name, spec in filters.items():
            value = spec.parse(request.query_params, name)
            if value is not None:
                lookups[spec.field or name] = value
        return queryset.filter(**lookups) if lookups else queryset

    def get_schema_operation_parameters(self, view) -> list[dict]:
        filters = getattr(view, "query_filters", {}) or {}
        return [
            {
                "name": name,
                "required": False,
                "in": "query",
                "description": f"filter by {spec.field or name}",
                "schema": ({"type": "integer", "minimum": 1, "maximum": MAX_DB_INTEGER} if spec.kind == "id"
                           else {"type": "string", "maxLength": getattr(spec, "max_length", MAX_TEXT_FILTER_CHARS)}),
            }
            for name, spec in filters.items()
        ]


def max_page_size() -> int:
    return int(getattr(settings, "API_MAX_PAGE_SIZE", DEFAULT_MAX_PAGE_SIZE))


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """Limit/offset pages with a maximum limit; a limit or offset out of range is a 400 naming it.

    (DRF's own class silently ignores a bad value and has no maximum by default.)
    """

    def get_limit(self, request) -> int | None:
        self.max_limit = max_page_size()
        return query_int(request.query_params, self.limit_query_param, minimum=1, maximum=self.max_limit,
                         default=self.default_limit)

    def get_offset(self, request) -> int:
        return query_int(request.query_params, self.offset_query_param, minimum=0, default=0) or 0

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        ranges = {self.limit_query_param: (1, max_page_size()), self.offset_query_param: (0, MAX_DB_INTEGER)}
        for parameter in parameters:
            if parameter["name"] in ranges:
                low, high = ranges[parameter["name"]]
                parameter["schema"] = {**parameter.get("schema", {}), "minimum": low, "maximum": high}
        return parameters
