"""Every file the product hands out is named one way and typed from one table; CSV cells stay formula-safe."""

import csv
import io

from django.http import StreamingHttpResponse

from reviewapp.core.exports.downloads import as_download, content_type_of, csv_download, download, stream_download


def test_a_plain_name_is_quoted_and_any_other_name_cannot_break_the_header():
    assert download("x", filename="pool-1.qrels")["Content-Disposition"] == 'attachment; filename="pool-1.qrels"'
    header = download("x", filename='Suite "Nevada"\r\nX-Evil: 1.csv')["Content-Disposition"]
    assert "\r" not in header and "\n" not in header
    assert header.startswith("attachment; filename*=utf-8''")


def test_the_type_comes_from_the_suffix_unless_given():
    assert download("a,b", filename="x.csv")["Content-Type"] == "text/csv; charset=utf-8"
    assert download(b"%PDF", filename="x.PDF")["Content-Type"] == "application/pdf"
    assert download("{}", filename="x.json", content_type="application/vnd.custom")["Content-Type"] == (
        "application/vnd.custom")
    assert content_type_of("x.unknown") == "application/octet-stream"


def test_a_streaming_response_is_named_too():
    response = as_download(StreamingHttpResponse(iter(["{}\n"])), "r.jsonl")
    assert response["Content-Disposition"] == 'attachment; filename="r.jsonl"'


def test_a_streamed_file_is_named_and_typed_from_its_name_and_sent_as_made():
    made = []

    def lines():
        for n in range(2):
            made.append(n)
            yield f'{{"n": {n}}}\n'

    response = stream_download(lines(), filename="ledger-3-receipts.jsonl")
    assert response["Content-Disposition"] == 'attachment; filename="ledger-3-receipts.jsonl"'
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert made == []  # nothing is made before the body is read
    assert b"".join(response.streaming_content) == b'{"n": 0}\n{"n": 1}\n'
    assert content_type_of("keyword.run") == "text/plain; charset=utf-8"


def test_csv_cells_that_start_a_formula_are_neutralised_and_numbers_stay_numbers():
    response = csv_download([{"model": "=HYPERLINK(1)", "delta": "-0.25", "extra": "dropped"}],
                            filename="runs.csv", fields=["model", "delta"])
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows == [["model", "delta"], ["'=HYPERLINK(1)", "-0.25"]]
