"""The README's and docs/usage.md's Python examples (and docs/implicit.md's stream check) run as
written, each in a fresh namespace,
and every relative link of the README, ``docs/`` and ``benchmarks/README.md`` leads somewhere.

Where an example claims something checkable (in the porting guide: an example's noise does not
depend on how the batch is cut), it asserts it itself. The README keeps the quick start and the
porting guide; the guide to the rest of the library, with its examples, is docs/usage.md.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
USAGE = ROOT / "docs" / "usage.md"
IMPLICIT = ROOT / "docs" / "implicit.md"


def _python_blocks(page):
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)


BLOCKS = [(page, index, code) for page in (README, USAGE, IMPLICIT)
          for index, code in enumerate(_python_blocks(page))
          # docs/implicit.md's other blocks are fragments of a model.
          if page is not IMPLICIT or "check_streams" in code]


def test_the_readme_and_the_usage_guide_have_examples():
    # The README: the quick start and the porting guide's three pairs; docs/usage.md: states
    # and streams, Hail's functions, implicit randomness and the stream check.
    assert len(_python_blocks(README)) >= 7
    assert len(_python_blocks(USAGE)) >= 4


@pytest.mark.parametrize("page, index, code", BLOCKS,
                         ids=[f"{page.name}-{index}" for page, index, _ in BLOCKS])
def test_example_runs(page, index, code):
    exec(compile(code, f"{page.name} python block {index}", "exec"), {})


# Relative links of the pages a reader follows from the README.
LINKED_PAGES = sorted({README, ROOT / "benchmarks" / "README.md",
                       *(ROOT / "docs").rglob("*.md")})
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _without_fences(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _prose(text):
    """The text without fenced code blocks and inline code spans, where brackets are code."""
    return re.sub(r"`[^`\n]*`", "", _without_fences(text))


def _headings(page):
    """A page's headings, fenced code blocks (whose lines may start with '#') left out."""
    return re.findall(r"^#{1,6} +(.+?) *#*$", _without_fences(page.read_text()), flags=re.M)


def _anchors(page):
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated heading numbered ``-1``, ``-2``, ..."""
    seen, anchors = {}, set()
    for heading in _headings(page):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(page):
    return [target for target in LINK.findall(_prose(page.read_text()))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", LINKED_PAGES, ids=[str(p.relative_to(ROOT)) for p in LINKED_PAGES])
def test_relative_links_lead_to_a_file_and_heading(page):
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(f"{target}: no such heading in {destination.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_check_reads_links_and_headings():
    assert "docs/usage.md" in _links(README)
    assert "guarantees-and-limits" in _anchors(ROOT / "docs" / "design.md")
    assert "constants-of-the-cpu-lowering-and-why" in _anchors(ROOT / "benchmarks" / "README.md")


# Code and docs cite the benchmarks' reasons as (benchmarks/README.md, "Heading"), the quoted
# words starting a heading there; a comment may wrap between the two.
CITATION = re.compile(r'benchmarks/README\.md,\s*(?:#\s*)?"([^"]+)"')


def _citations():
    sources = [*(ROOT / "jaxpmac").rglob("*.py"), *(ROOT / "tests").rglob("*.py"),
               *(ROOT / "benchmarks").glob("*.py"), *(ROOT / "docs").rglob("*.md")]
    return [(source, " ".join(title.replace("#", " ").split())) for source in sources
            if source != pathlib.Path(__file__).resolve()
            for title in CITATION.findall(source.read_text())]


def test_citations_of_the_benchmarks_name_a_heading():
    headings = _headings(ROOT / "benchmarks" / "README.md")
    cited = _citations()
    assert cited, "no citation of benchmarks/README.md found: the pattern is out of date"
    broken = [f"{source.relative_to(ROOT)}: {title!r}" for source, title in cited
              if not any(heading.startswith(title) for heading in headings)]
    assert not broken, "no such heading in benchmarks/README.md: " + "; ".join(broken)
