"""The built site in a real browser: its search finds pages, its code blocks fit their column.

The site is built with ``mkdocs build --strict``, served on 127.0.0.1 and opened in headless
Chromium (site_browser.py), as a reader opens it: a search typed into the search box lists the
pages that hold the word; the code blocks of the pages written by hand show their lines whole,
without a scroll bar, at the window size of a laptop. Skipped, saying why, where no Chromium is
installed (CI installs Debian's chromium).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from site_browser import CODE_BLOCK_WIDTH, REPO, SKIP_REASON, Browser, build_site, chromium, served

HAND_WRITTEN = sorted(
    str(page.relative_to(REPO / "docs").with_suffix(""))
    for page in (REPO / "docs").rglob("*.md")
    # the references are made from the parser and the docstrings (tools/, dra_metadata/)
    if page.parent.name != "python" and page.name not in {"cli.md", "changelog.md"}
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of the built site, served on 127.0.0.1."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (extra docs, in the dev extra)")
    if chromium() is None:
        pytest.skip(SKIP_REASON)
    with served(build_site(tmp_path_factory.mktemp("site"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser(site: str) -> Iterator[Browser]:
    executable = chromium()
    assert executable is not None
    opened = Browser(executable, width=1280, height=1000)
    yield opened
    opened.close()


def url_of(site: str, page: str) -> str:
    path = page.removesuffix("index")
    return f"{site}{path}/" if path and not path.endswith("/") else f"{site}{path}"


def search(browser: Browser, site: str, words: str) -> str:
    """What the search box shows for ``words``: its count line, once the results are in."""
    browser.open(site)
    browser.evaluate("document.querySelector('.md-search__input').focus()")
    browser.type(words)
    return str(
        browser.until(
            "(() => { const meta = document.querySelector('.md-search-result__meta');"
            " return meta && /match/i.test(meta.textContent) && meta.textContent; })()"
        )
    )


@pytest.mark.timeout(600)
def test_the_search_finds_the_pages_that_hold_a_word(browser: Browser, site: str) -> None:
    shown = search(browser, site, "DraNet")
    assert "matching document" in shown, shown
    # The count line comes first, the results a moment later (the first ten at once).
    browser.until(
        "(() => { const count = parseInt(document.querySelector('.md-search-result__meta')"
        ".textContent, 10); return document.querySelectorAll('.md-search-result__item')"
        ".length >= Math.min(count, 10); })()"
    )
    links = browser.evaluate(
        "[...document.querySelectorAll('.md-search-result__item > a')].map(a => a.href)"
    )
    assert f"{site}guides/kubernetes-api/" in links, links
    # A result leads to its page: wait for that page (the search page is complete too, so
    # its readyState alone says nothing), then look at its title.
    first = links[0]
    assert first.startswith(site), links
    assert first != site, links
    browser.evaluate("document.querySelector('.md-search-result__item > a').click()")
    browser.until(f"location.href === {json.dumps(first)} && document.readyState === 'complete'")
    assert browser.evaluate("document.querySelector('.md-content h1').textContent.trim()")


@pytest.mark.timeout(600)
def test_a_word_on_no_page_finds_nothing(browser: Browser, site: str) -> None:
    shown = search(browser, site, "xylophonequartz")
    assert shown.strip() == "No matching documents", shown


_OVERFLOWING = """(() => [...document.querySelectorAll('.md-content pre > code')]
    .filter(code => code.scrollWidth > code.clientWidth)
    .map(code => code.textContent.split('\\n').reduce((a, b) => (b.length > a.length ? b : a)))
)()"""

_FITS = """((count) => {
    const code = document.querySelector('.md-content pre > code');
    const style = getComputedStyle(code);
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(count);
    code.appendChild(probe);
    const width = probe.getBoundingClientRect().width;
    probe.remove();
    const room = code.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return width <= room;
})"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize("width", [1280, 1920])
def test_a_code_line_of_the_width_fits_the_column(site: str, width: int) -> None:
    """CODE_BLOCK_WIDTH, which tests/docs/test_code_block_width.py holds every line to, is
    what the theme shows: that many characters fit, one more does not."""
    executable = chromium()
    assert executable is not None
    browser = Browser(executable, width=width, height=1000)
    try:
        browser.open(url_of(site, "getting-started"))
        assert browser.evaluate(f"{_FITS}({CODE_BLOCK_WIDTH})") is True
        assert browser.evaluate(f"{_FITS}({CODE_BLOCK_WIDTH + 1})") is False
    finally:
        browser.close()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", HAND_WRITTEN)
def test_no_code_block_of_a_page_scrolls(browser: Browser, site: str, page: str) -> None:
    browser.open(url_of(site, page))
    assert browser.evaluate("document.querySelectorAll('.md-content').length") == 1
    overflowing = browser.evaluate(_OVERFLOWING)
    assert overflowing == [], json.dumps(overflowing, indent=1)


def test_the_pages_are_found() -> None:
    assert {"index", "getting-started", "guides/waiting"} <= set(HAND_WRITTEN)
    assert all((REPO / "docs" / f"{page}.md").is_file() for page in HAND_WRITTEN)


def test_the_site_is_served_from_its_directory(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<title>served</title>")
    import urllib.request  # noqa: PLC0415

    with served(tmp_path) as url, urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310
        assert b"<title>served</title>" in answer.read()
