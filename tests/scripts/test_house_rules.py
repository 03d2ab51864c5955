"""make lint's house rules: folder width, no issue numbers in code, one download helper, a versioned CHANGELOG."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("house_rules", ROOT / "scripts" / "house_rules.py")
assert _spec is not None and _spec.loader is not None
house_rules = importlib.util.module_from_spec(_spec)
sys.modules["house_rules"] = house_rules
_spec.loader.exec_module(house_rules)


def test_a_folder_of_thirteen_modules_is_too_wide_and_twelve_is_not(tmp_path):
    folder = tmp_path / "grading" / "wide"
    folder.mkdir(parents=True)
    for i in range(12):
        (folder / f"m{i}.py").write_text("")
    assert house_rules.too_wide(tmp_path) == []
    (folder / "m12.py").write_text("")
    assert house_rules.too_wide(tmp_path) == ["grading/wide/ holds 13 modules (at most 12)"]


ISSUE = "iss" + "ue"  # spelled apart, so that this file does not break the rule it tests


def test_it_names_each_line_of_code_that_names_an_issue(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.py").write_text(f"x = 1\n# as {ISSUE} #38 asks\n")
    (tmp_path / "b.html").write_text(f"<p>{ISSUE.title()} 7</p>\n")
    (tmp_path / "c.md").write_text(f"{ISSUE} 9 is prose, not code\n")
    (tmp_path / "d.py").write_text(f"t{ISSUE} 3 = 'no'\n")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    said = house_rules.issue_references(tmp_path)
    assert [line.split(":")[:2] for line in said] == [["a.py", "2"], ["b.html", "1"]]


def test_only_the_download_helper_names_a_response_as_a_file(tmp_path):
    helper = tmp_path / "reviewapp" / "core" / "exports" / "downloads.py"
    helper.parent.mkdir(parents=True)
    helper.write_text('def as_download(r, name):\n    r["Content-Disposition"] = name\n')
    views = tmp_path / "grading" / "gold" / "views.py"
    views.parent.mkdir(parents=True)
    views.write_text('"""Files leave through the helper, never a Content-Disposition of their own."""\n'
                     'r = {}\n# content-disposition in a comment is no header\n'
                     'r["Content-Disposition"] = "attachment"\nr = dict(headers={"content-disposition": "x"})\n')
    said = house_rules.download_headers_by_hand(tmp_path, allowed=frozenset())
    assert [line.split(":")[:2] for line in said] == [["grading/gold/views.py", "4"], ["grading/gold/views.py", "5"]]
    assert house_rules.download_headers_by_hand(tmp_path, allowed=frozenset({"grading/gold/views.py"})) == []


def test_a_changelog_is_versioned_newest_first_one_line_a_change():
    good = "# Changelog\n\n## 0.2.0 - 2026-12-04\n- A change.\n\n## 0.1.0 - 2026-11-01\n- Another.\n"
    assert house_rules.changelog_problems(good) == []
    assert house_rules.changelog_problems("# Changelog\n## Unreleased\n- x\n") == [
        "CHANGELOG.md:2: a release heading is `## X.Y.Z - YYYY-MM-DD`, not '## Unreleased'",
        "CHANGELOG.md: no versioned release (`## X.Y.Z - YYYY-MM-DD`)",
    ]
    wrapped = f"## 0.1.0 - 2026-11-01\n- A change\n  that wraps ({ISSUE} #3).\n"
    assert house_rules.changelog_problems(wrapped) == [
        "CHANGELOG.md:3: a change is one line; this continues the line above",
        "CHANGELOG.md:3: names an issue; say what a user or an operator notices",
    ]
    assert house_rules.changelog_problems("## 0.1.0 - 2026-11-01\n## 0.2.0 - 2026-12-01\n") == [
        "CHANGELOG.md: releases are not newest first"
    ]


def test_the_repository_keeps_its_house_rules():
    assert house_rules.too_wide() == []
    assert house_rules.issue_references() == []
    assert house_rules.download_headers_by_hand() == []
