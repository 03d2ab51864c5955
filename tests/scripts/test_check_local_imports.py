"""make lint's count of imports inside functions: what counts, what says why, and the project under the limit."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_local_imports", ROOT / "scripts" / "check_local_imports.py")
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
sys.modules["check_local_imports"] = check
_spec.loader.exec_module(check)

MODULE = '''import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from decimal import Decimal


def plain():
    from pathlib import Path
    return Path


class Thing:
    def method(self):
        import csv

        def inner():
            import io
            return io
        return csv, inner


def measured():
    # local import: numpy costs ~0.1 s and only this function needs it;
    # the pages importing this module make no array.
    import numpy
    import numpy.linalg
    return numpy


def said_on_the_line():
    import scipy  # local import: an optional dependency
    return scipy


def the_comment_covers_one_run_only():
    # local import: lxml, optional
    from lxml import etree

    import os
    return etree, os
'''


def test_it_counts_each_import_in_a_function_method_or_nested_function_unless_it_says_why():
    imports, local, allowed = check.tally_source(MODULE, "m.py")
    assert imports == 11
    assert [(item.line, item.function) for item in local] == [
        (9, "plain"), (15, "method"), (18, "inner"), (40, "the_comment_covers_one_run_only"),
    ]
    assert allowed == 4


def test_the_share_is_of_every_import_of_the_packages(tmp_path):
    package = tmp_path / "pkg"
    (package / "migrations").mkdir(parents=True)
    (package / "a.py").write_text("import os\nimport sys\nimport re\n\n\ndef f():\n    import json\n    return json\n")
    (package / "migrations" / "0001.py").write_text("def f():\n    import json\n")
    result = check.tally(tmp_path, ("pkg",))
    assert (result.imports, len(result.local), result.share) == (4, 1, 0.25)


def test_the_project_keeps_its_imports_at_the_top():
    result = check.tally()
    assert result.share <= check.MAX_SHARE, [f"{item.path}:{item.line}" for item in result.local]
