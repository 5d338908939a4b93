"""The Spaces in a real browser: Debian's chromium (installed by scripts/test.sh, headless, driven by Selenium
through the system chromedriver; no downloaded browser build). The suite, every metric's Space and the leaderboard are
opened as a visitor would: type or pick the example, click, read the tables and charts. Each page is saved as a
screenshot under the test's temp dir and, with ``CAPEVAL_SCREENSHOTS=docs/screenshots``, as the small copy the
development docs show (``docs/development.md``, "Screenshots")."""

import os
import shutil
from pathlib import Path

import pytest

import capeval
from capeval.integrations.gradio_app import build_metric_space, build_suite_space, space_metric, suite_metrics
from capeval.integrations.leaderboard import build_leaderboard_space
from capeval.registry import Registry

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="Debian's chromium and chromium-driver are not installed (scripts/test.sh installs them as root with apt-get)")]

CANDIDATE = "a man riding a horse"
REFERENCES = ["A man rides a brown horse .", "a man on a horse"]
#: The browser's width, and the width, height at most and colours of the docs' copies (a few hundred KiB for every
#: page together: the leaderboard's long tables are cut).
WINDOW_WIDTH, DOCS_WIDTH, DOCS_HEIGHT, DOCS_COLOURS = 1000, 560, 1400, 16
SCREENSHOTS = os.environ.get("CAPEVAL_SCREENSHOTS")
#: The elements inside the given one whose content is wider than they show (a table scrolling sideways, a cut cell).
WIDER_THAN_SHOWN = ("return [arguments[0], ...arguments[0].querySelectorAll('*')]"
                    ".filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')"
                    ".map(e => e.tagName + ' ' + e.scrollWidth + '>' + e.clientWidth + ' ' + e.innerText.slice(0, 40))")


def screenshot(browser, folder: Path, name: str) -> Path:
    """The whole page (the window grown to its height) as ``folder/name.png``; a small copy in ``$CAPEVAL_SCREENSHOTS``
    when set: ``DOCS_WIDTH`` pixels wide, ``DOCS_HEIGHT`` high at most, ``DOCS_COLOURS`` colours."""
    from PIL import Image

    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(WINDOW_WIDTH, min(height + 120, 4000))  # the window's frame takes about 120 pixels
    path = folder / f"{name}.png"
    browser.save_screenshot(str(path))
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        with Image.open(path) as page:
            small = page.convert("RGB").resize((DOCS_WIDTH, round(page.height * DOCS_WIDTH / page.width)), Image.LANCZOS)
        small = small.crop((0, 0, DOCS_WIDTH, min(small.height, DOCS_HEIGHT)))
        small.quantize(DOCS_COLOURS).save(Path(SCREENSHOTS) / f"{name}.png", optimize=True)
    return path


@pytest.fixture
def browser(monkeypatch):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must not fetch a browser or driver
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={WINDOW_WIDTH},1400"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_suite_space_in_chromium(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    demo = build_suite_space()  # every configuration that runs here, as the suite's app.py builds it
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        browser.get(demo.local_url)
        wait = WebDriverWait(browser, 90)
        wait.until(expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, "#candidates textarea"))).send_keys(CANDIDATE)
        browser.find_element(By.CSS_SELECTOR, "#references textarea").send_keys("\n".join(REFERENCES))
        browser.find_element(By.ID, "score").click()
        wait.until(lambda driver: CANDIDATE in driver.find_element(By.ID, "scores").text)
        shot = screenshot(browser, tmp_path, "suite")
        # The table's text, line by line: its label, the headers (the metrics', then the candidate's), then the cells.
        lines = browser.find_element(By.ID, "scores").text.splitlines()
        count = len(suite_metrics()) + 1
        headers, row = lines[1:1 + count], lines[1 + count:1 + 2 * count]
        cells = dict(zip(headers, row))
        cider = capeval.load("cider", idf="flickr8k").compute(predictions=[CANDIDATE], references=[REFERENCES])["cider"]
        assert float(cells["CIDEr-D"]) == round(cider, 4) and cider > 1.0, lines
        assert float(cells["BERT-TBR (unigram)"]) == 0.5  # 2 of the 4 combined content words
        assert set(cells) == {"candidate", *(m.label for m in suite_metrics())}
        assert shot.stat().st_size > 10_000
        # The chart is one panel per metric (a figure, not bars stacked by candidate).
        assert browser.find_elements(By.CSS_SELECTOR, "#chart img, #chart svg, #chart canvas")
    finally:
        demo.close()


def launched(browser, demo):
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    browser.get(demo.local_url)
    return demo


def test_bleu_space_shows_bleu_1_to_4(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    demo = launched(browser, build_metric_space("bleu"))
    try:
        wait = WebDriverWait(browser, 90)
        boxes = wait.until(expected_conditions.presence_of_all_elements_located((By.CSS_SELECTOR, "textarea")))
        boxes[0].send_keys(CANDIDATE)
        boxes[1].send_keys("\n".join(REFERENCES))
        next(b for b in browser.find_elements(By.TAG_NAME, "button") if b.text == "Score").click()
        wait.until(lambda driver: "corpus" in driver.find_element(By.ID, "scores").text.splitlines())  # the row, not the label
        text = browser.find_element(By.ID, "scores").text
        assert all(f"bleu_{n}" in text for n in range(1, 5)), text
        bleu = capeval.load("bleu").compute(predictions=[CANDIDATE], references=[REFERENCES])
        assert f"{bleu['bleu_1']:.4f}" in text.splitlines() and f"{bleu['scores'][0]:.2g}" in text.splitlines()  # 1.6e-08
    finally:
        demo.close()


def test_leaderboard_pivot(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    demo = launched(browser, build_leaderboard_space())
    try:
        WebDriverWait(browser, 90).until(lambda driver: "cider" in driver.find_element(By.ID, "pivot").text)
        screenshot(browser, tmp_path, "leaderboard")
        text = browser.find_element(By.ID, "pivot").text
        assert "Flickr8k-Expert · P1 mean · tau-c" in text and "bleu" in text and "meteor" in text
        assert "bert_tbr:mode=unigram" in text and "smurf:components=sparcs" in text  # the seed metrics' rows
        # The pivots fit the page: nothing scrolls sideways or is cut, neither the page nor a table or cell in it.
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        for name in ("pivot", "benchmark-pivot"):
            assert browser.execute_script(WIDER_THAN_SHOWN, browser.find_element(By.ID, name)) == [], name
        # The skipped runs are one collapsed list: its title shows, its lines do not until opened.
        not_run = browser.find_element(By.ID, "not-run")
        assert not_run.text.startswith("Not run (9 runs)") and "needs references" not in not_run.text
        assert "Published beside reproduced" in browser.find_element(By.TAG_NAME, "body").text
    finally:
        demo.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(Registry()))
def test_every_metric_space_in_chromium(browser, tmp_path, name):
    """Each metric's Space as a visitor meets it here: what it lacks said at the top; else its example (the one with
    the most candidates) scored, the table's corpus row and the chart shown."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    metric = space_metric(name)
    demo = launched(browser, build_metric_space(name, metric=metric))
    try:
        wait = WebDriverWait(browser, 180)
        examples = wait.until(expected_conditions.presence_of_all_elements_located((By.CSS_SELECTOR, "tr.tr-body")))
        missing = browser.find_elements(By.ID, "missing")
        if metric.missing:
            assert "cannot run here" in missing[0].text and metric.missing[:40] in missing[0].text
        else:
            assert not (missing and missing[0].is_displayed())
            wait.until(expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, "textarea")))
            examples = browser.find_elements(By.CSS_SELECTOR, "tr.tr-body")
            examples[-1].click()
            wait.until(lambda driver: driver.find_element(By.CSS_SELECTOR, "textarea").get_attribute("value"))
            next(b for b in browser.find_elements(By.TAG_NAME, "button") if b.text == "Score").click()
            wait.until(lambda driver: "corpus" in driver.find_element(By.ID, "scores").text.splitlines())
            wait.until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#chart img, #chart svg"))
        screenshot(browser, tmp_path, name)
    finally:
        demo.close()
