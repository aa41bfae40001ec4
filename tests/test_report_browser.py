"""The HTML report in a real browser: it loads with no console error and every chart draws.

Headless Chromium driven by selenium, as Debian packages them (``chromium``
and ``chromium-driver``; ``.ci/run`` installs both where apt is available).
The page is opened from a file, with no network: every script is inline.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("altair", reason="the report's charts need the plot extra")
pytest.importorskip("vl_convert", reason="the report's charts need the plot extra")
webdriver = pytest.importorskip(
    "selenium.webdriver", reason="selenium is in the dev extra: pip install -e '.[dev]'"
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
DATA = Path(__file__).resolve().parents[1] / "data"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no headless browser here: install Debian's chromium and chromium-driver "
    "(apt-get install chromium chromium-driver; .ci/run does where apt is available)",
)


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1300,1800",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def _open(browser, page: Path) -> tuple[int, int, list[dict]]:
    browser.get(page.as_uri())
    total = drawn = 0
    for _ in range(150):  # at most 30 s for every chart to draw
        total = browser.execute_script(
            "return document.querySelectorAll('.vega').length"
        )
        drawn = browser.execute_script(
            "return Array.from(document.querySelectorAll('.vega')).filter("
            "e => e.dataset.drawn === 'yes' && e.querySelector('svg.marks')).length"
        )
        if drawn >= total:
            break
        time.sleep(0.2)
    return total, drawn, browser.get_log("browser")


def test_the_report_loads_without_errors_and_draws_every_chart(browser, tmp_path):
    from ireval_df.cli.main import main

    target = tmp_path / "report.html"
    runs = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense", "hybrid")]
    argv = [
        "report",
        "--run",
        *runs,
        "--qrels",
        str(DATA / "qrels.txt"),
        "--queries",
        str(DATA / "queries.tsv"),
        "--by",
        "query_class",
        "-o",
        str(target),
    ]
    assert main(argv) == 0  # its warnings go to stderr, and onto the page
    total, drawn, log = _open(browser, target)
    errors = [entry["message"] for entry in log if entry["level"] == "SEVERE"]
    assert errors == []
    assert total == 9
    assert drawn == total
    failed = browser.execute_script(
        "return document.querySelectorAll('.vega .error').length"
    )
    assert failed == 0
    # every section is on the page, under its link
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('nav a')).map(a => a.textContent)"
    )
    assert links[0] == "Summary"
    assert links[-1] == "Settings and versions"
    browser.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000
