"""The API's JSON parser: DRF's, through the one bounded JSON path (``reviewapp.core.http.json_input``)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from reviewapp.core.http.json_input import JsonInputError, json_loads, max_bytes, read_limited


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser through ``json_loads``: a body too big or too deep is a 400, never a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            "".encode(encoding)  # refuses bytes-to-bytes codecs (bz2_codec...), as DRF does
        except (LookupError, UnicodeError):
            raise ParseError(f'Unsupported charset "{encoding}" in request Content-Type header.') from None
        try:
            body = read_limited(stream, limit=max_bytes())
            text = body.decode(encoding)
            return json_loads(text, strict_numbers=api_settings.STRICT_JSON)
        except UnicodeDecodeError as error:
            raise ParseError(f"JSON parse error - byte {error.start} is not {encoding}") from None
        except JsonInputError as error:
            raise ParseError(f"JSON parse error - {error}") from None
