"""The Spaces in a real browser: Debian's chromium (installed by scripts/test.sh, headless, driven by Selenium
through the system chromedriver; no downloaded browser build). The suite, BLEU's Space and the leaderboard are
opened as a visitor would: type, click, read the tables and charts; screenshots are saved under the test's temp dir."""

import shutil

import pytest

import capeval
from capeval.integrations.gradio_app import build_metric_space, build_suite_space, suite_metrics
from capeval.integrations.leaderboard import build_leaderboard_space

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="Debian's chromium and chromium-driver are not installed (scripts/test.sh installs them as root with apt-get)")]

CANDIDATE = "a man riding a horse"
REFERENCES = ["A man rides a brown horse .", "a man on a horse"]


@pytest.fixture
def browser(monkeypatch):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must not fetch a browser or driver
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,2000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_suite_space_in_chromium(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    demo = build_suite_space([m for m in suite_metrics() if m.label in ("BLEU-4", "CIDEr-D", "BERT-TBR (unigram)")])
    demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        browser.get(demo.local_url)
        wait = WebDriverWait(browser, 90)
        wait.until(expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, "#candidates textarea"))).send_keys(CANDIDATE)
        browser.find_element(By.CSS_SELECTOR, "#references textarea").send_keys("\n".join(REFERENCES))
        browser.find_element(By.ID, "score").click()
        wait.until(lambda driver: CANDIDATE in driver.find_element(By.ID, "scores").text)
        browser.save_screenshot(str(tmp_path / "suite.png"))
        # The table's text, line by line: its label, the headers, then the candidate and its cells.
        lines = browser.find_element(By.ID, "scores").text.splitlines()
        headers, row = lines[1:lines.index(CANDIDATE)], lines[lines.index(CANDIDATE):]
        cells = dict(zip(headers, row))
        cider = capeval.load("cider", idf="flickr8k").compute(predictions=[CANDIDATE], references=[REFERENCES])["cider"]
        assert float(cells["CIDEr-D"]) == round(cider, 4) and cider > 1.0, lines
        assert float(cells["BERT-TBR (unigram)"]) == 0.5  # 2 of the 4 combined content words
        assert set(cells) == {"candidate", "BERT-TBR (unigram)", "BLEU-4", "CIDEr-D"}
        assert (tmp_path / "suite.png").stat().st_size > 10_000
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
        wait.until(lambda driver: "corpus" in driver.find_element(By.ID, "scores").text)
        browser.save_screenshot(str(tmp_path / "bleu.png"))
        text = browser.find_element(By.ID, "scores").text
        assert all(f"bleu_{n}" in text for n in range(1, 5)), text
        bleu = capeval.load("bleu").compute(predictions=[CANDIDATE], references=[REFERENCES])
        assert f"{bleu['bleu_1']:.4f}" in text and f"{bleu['scores'][0]:.4f}" in text
    finally:
        demo.close()


def test_leaderboard_pivot(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    demo = launched(browser, build_leaderboard_space())
    try:
        WebDriverWait(browser, 90).until(lambda driver: "cider" in driver.find_element(By.ID, "pivot").text)
        browser.save_screenshot(str(tmp_path / "leaderboard.png"))
        text = browser.find_element(By.ID, "pivot").text
        assert "Flickr8k-Expert · P1 mean · tau-b" in text and "bleu" in text and "meteor" in text
        assert "bert_tbr(mode=unigram)" in text and "smurf(components=['sparcs'])" in text  # the seed metrics' rows
        assert "Published beside reproduced" in browser.find_element(By.TAG_NAME, "body").text
    finally:
        demo.close()
