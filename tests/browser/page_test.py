#!/usr/bin/python3
"""nmt serve's page (GET /) in a real browser: headless Chromium driven by Selenium
(Debian's chromium, chromium-driver and python3-selenium). Run by tests/test_serve_page.cpp
against a server it started on a tiny model; can be run by hand against any `nmt serve`:

  tests/browser/page_test.py --url http://127.0.0.1:8080 --out /tmp/page_shots

Checks, with a screenshot after each step in OUT:
  1. two lines typed and Ctrl+Enter: the page shows exactly what POST /translate answers;
  2. alternatives: with 3 of them, each line's alternatives and scores are /translate's n-best;
  3. a source line <script>alert(1)</script> is shown as text and runs nothing;
  4. the attention map of a sentence appears (an image the browser could decode);
  5. a .txt file uploaded is translated and downloaded, equal to /translate's answer;
  6. a line longer than the server's --max-text-bytes shows the 413 error in words;
  7. a prefix and a term typed in their fields: each line's translation is /translate's with
     that "prefix" and those "constraints", and starts with the prefix;
  8. a blank line between two keeps the outputs aligned with the lines, and on a phone-sized
     window (390 px) nothing is wider than the screen;
  9. the Languages menu offers /info's targets; for a model of several (served without a
     default target, so that a request without "tgt_lang" fails), each chosen target gives
     /translate's answer with that "tgt_lang", and its attention map.
  10. (--api-key KEY, alone: a server started with --api-keys) the page asks for a key: a line
     translated without one, or with a wrong one, shows the 401 in words and asks again; with
     KEY it shows /translate's answer, and after a reload it still has the key.
With --only-languages, step 9 alone (tests/test_multilingual.cpp: a model of two targets).
Exits 1 naming the first check that failed.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

LINES = ["a dog runs .", "two men are playing football ."]


def post(url, path, body, key=None):
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


class Page:
    def __init__(self, url, out, downloads):
        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1000,1400"):
            options.add_argument(flag)
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                                  "download.prompt_for_download": False})
        service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.execute_cdp_cmd("Page.setDownloadBehavior",
                                    {"behavior": "allow", "downloadPath": downloads})
        self.url, self.out, self.shot = url, out, 0

    def screenshot(self, name):
        self.shot += 1
        self.driver.save_screenshot(os.path.join(self.out, "%02d_%s.png" % (self.shot, name)))

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def wait(self, condition, what, seconds=30):
        try:
            return WebDriverWait(self.driver, seconds).until(lambda d: condition())
        except TimeoutException:
            self.screenshot("timeout")
            raise AssertionError("timed out waiting for " + what)

    def translate(self, lines):
        source = self.by_id("source")
        source.clear()
        source.send_keys("\n".join(lines))
        self.driver.execute_script("document.getElementById('status').textContent = '';"
                                   "document.getElementById('error').textContent = '';")
        source.send_keys(Keys.CONTROL, Keys.ENTER)
        self.wait(lambda: self.by_id("status").text.startswith("Done") or self.by_id("error").text,
                  "the translation")

    def outputs(self):
        return [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#output .best")]

    def attention_shown(self):
        self.driver.execute_script("document.getElementById('attention-view').replaceChildren();")
        self.by_id("attention").click()
        self.wait(lambda: self.by_id("error").text or self.driver.execute_script(
            "const i = document.getElementById('attention-image');"
            "return i !== null && i.complete && i.naturalWidth > 0;"), "the attention image")
        check(not self.by_id("error").text, "attention: " + self.by_id("error").text)


def check_languages(page, url, beam):
    """Step 9: the Languages menu against /info, and each target against /translate."""
    languages = json.load(urllib.request.urlopen(url + "/info"))["languages"]
    menu = Select(page.by_id("direction"))
    values = [o.get_attribute("value") for o in menu.options]
    check(values == languages["targets"],
          "the Languages menu offers %s, /info's targets are %s" % (values, languages["targets"]))
    for lang in languages["targets"]:
        menu.select_by_value(lang)
        page.translate(LINES)
        check(not page.by_id("error").text, "into %s: %s" % (lang, page.by_id("error").text))
        expected = [t["text"] for t in post(url, "/translate", {
            "text": LINES, "beam": beam, "nbest": 1, "scores": True,
            "tgt_lang": lang})["translations"]]
        check(page.outputs() == expected, "into %s the page shows %s, /translate answers %s"
              % (lang, page.outputs(), expected))
        page.attention_shown()
        page.screenshot("into_" + lang)


def check_key(page, url, key, beam):
    """Step 10: the key asked for once and kept for the session."""
    check(page.by_id("key-form").is_displayed(), "the page does not ask for an API key")
    page.screenshot("asks_for_key")
    for typed in ("", "not-the-key-0123456789"):
        if typed:
            page.by_id("api-key").send_keys(typed, Keys.ENTER)
            page.wait(lambda: not page.by_id("key-form").is_displayed(), "the key form to close")
        page.translate(LINES)
        error = page.by_id("error").text
        check(error.startswith("401 a valid API key is needed"),
              "with key %r the page shows %r" % (typed, error))
        check(page.by_id("key-form").is_displayed(), "after a 401 the page does not ask again")
    page.by_id("api-key").send_keys(key, Keys.ENTER)
    expected = [t["text"] for t in post(url, "/translate", {
        "text": LINES, "beam": beam, "nbest": 1, "scores": True}, key)["translations"]]
    for when in ("with the key", "after a reload"):
        if when == "after a reload":
            page.driver.refresh()
            page.wait(lambda: "Model:" in page.by_id("pair").text, "the model's description")
            check(not page.by_id("key-form").is_displayed(), "after a reload the page asks again")
        page.translate(LINES)
        check(not page.by_id("error").text, "%s: %s" % (when, page.by_id("error").text))
        check(page.outputs() == expected, "%s the page shows %s, /translate answers %s"
              % (when, page.outputs(), expected))
        page.screenshot("key_" + when.replace(" ", "_"))


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--out", required=True, help="screenshots go here")
    parser.add_argument("--only-languages", action="store_true", help="step 9 alone")
    parser.add_argument("--api-key", help="step 10 alone, with this key")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    downloads = tempfile.mkdtemp(prefix="nmt_page_downloads_")
    page = Page(args.url, args.out, downloads)
    step = "opening the page"
    try:
        page.driver.get(args.url + "/")
        page.wait(lambda: "Model:" in page.by_id("pair").text, "the model's description")
        beam = int(page.by_id("beam").get_attribute("value"))
        page.screenshot("loaded")
        if args.api_key:
            step = "10. the API key"
            check_key(page, args.url, args.api_key, beam)
            print("page_test: every key check passed; screenshots in " + args.out)
            return 0
        if args.only_languages:
            step = "9. the target language"
            check_languages(page, args.url, beam)
            print("page_test: every language check passed; screenshots in " + args.out)
            return 0

        step = "1. two lines and Ctrl+Enter"
        page.translate(LINES)
        expected = post(args.url, "/translate", {"text": LINES, "beam": beam, "nbest": 1,
                                                 "scores": True})["translations"]
        check(page.outputs() == [t["text"] for t in expected],
              "the page shows %s, /translate answers %s" % (page.outputs(), expected))
        page.screenshot("translated")

        step = "2. alternatives"
        page.by_id("nbest").clear()
        page.by_id("nbest").send_keys("3")
        page.translate(LINES)
        api = post(args.url, "/translate", {"text": LINES, "beam": max(beam, 3), "nbest": 3,
                                            "scores": True})["translations"]
        lists = page.driver.find_elements(By.CSS_SELECTOR, "#output ol.alternatives")
        check(len(lists) == len(LINES), "%d lists of alternatives for %d lines" % (len(lists),
                                                                                  len(LINES)))
        for shown, answer in zip(lists, api):
            items = shown.find_elements(By.CSS_SELECTOR, "li.alternative")
            got = [(i.text.rsplit(" (", 1)[0], float(i.get_attribute("data-score"))) for i in items]
            want = [(h["text"], h["score"]) for h in answer["nbest"]]
            check(len(got) == len(want) and all(g[0] == w[0] and abs(g[1] - w[1]) < 1e-9
                                                for g, w in zip(got, want)),
                  "alternatives %s, /translate's n-best %s" % (got, want))
        page.screenshot("alternatives")
        page.by_id("nbest").clear()
        page.by_id("nbest").send_keys("1")

        step = "3. a source line with markup"
        hostile = "<script>alert(1)</script>"
        page.translate([hostile, LINES[0]])
        try:
            page.driver.switch_to.alert
            raise AssertionError("an alert opened: the source ran as a script")
        except NoAlertPresentException:
            pass
        options = [o.text for o in page.driver.find_elements(By.CSS_SELECTOR,
                                                             "#attention-line option")]
        check(options and options[0] == "1: " + hostile,
              "the sentence selector shows %s, not the line as text" % options[:1])
        check(not page.driver.find_elements(By.CSS_SELECTOR, "#output script, main script"),
              "a <script> element appeared in the page")
        page.screenshot("markup_as_text")

        step = "4. the attention map"
        page.translate(LINES)
        page.attention_shown()
        page.screenshot("attention")

        step = "5. a file, uploaded and downloaded"
        upload = os.path.join(downloads, "upload.txt")
        file_lines = LINES + ["a woman in a red dress .", "people walk ."]
        with open(upload, "w", encoding="utf-8") as f:
            f.write("\n".join(file_lines) + "\n")
        page.by_id("file").send_keys(upload)
        page.by_id("translate-file").click()
        result = os.path.join(downloads, "upload.translated.txt")
        page.wait(lambda: os.path.exists(result) and not any(
            n.endswith(".crdownload") for n in os.listdir(downloads)), "the download")
        time.sleep(0.2)
        with open(result, encoding="utf-8") as f:
            downloaded = f.read().splitlines()
        expected = [t["text"] for t in post(args.url, "/translate", {
            "text": file_lines, "beam": beam, "nbest": 1, "scores": True})["translations"]]
        check(downloaded == expected, "downloaded %s, /translate answers %s" % (downloaded,
                                                                               expected))
        check(page.by_id("file-progress").get_attribute("value") == str(len(file_lines)),
              "the progress bar did not reach the end")
        page.screenshot("file")

        step = "6. an error in words"
        limit = json.load(urllib.request.urlopen(args.url + "/info"))["limits"]["max_text_bytes"]
        page.translate(["a dog " * (limit // 6 + 1)])
        error = page.by_id("error").text
        check(error.startswith("413 too large:") and "--max-text-bytes" in error,
              "the page shows %r for an over-long line" % error)
        page.screenshot("error")

        step = "7. a prefix and terms"
        prefix, term = "ein", "Hund"
        page.by_id("prefix").send_keys(prefix)
        page.by_id("terms").send_keys(" " + term + " ,")
        page.translate(LINES)
        expected = [t["text"] for t in post(args.url, "/translate", {
            "text": LINES, "beam": beam, "nbest": 1, "scores": True,
            "prefix": [prefix] * len(LINES), "constraints": [[term]] * len(LINES)})["translations"]]
        check(page.outputs() == expected,
              "with a prefix and a term the page shows %s, /translate answers %s"
              % (page.outputs(), expected))
        check(all(t.startswith(prefix) for t in page.outputs()),
              "not every translation starts with %r: %s" % (prefix, page.outputs()))
        page.screenshot("prefix_and_terms")
        page.by_id("prefix").clear()
        page.by_id("terms").clear()

        step = "8. blank lines and a phone-sized window"
        page.translate([LINES[0], "", LINES[1]])
        shown = page.outputs()
        check(len(shown) == 3 and shown[1] == "" and shown[0] and shown[2],
              "three lines with a blank one in the middle gave %s" % shown)
        page.driver.set_window_size(390, 844)
        wide = page.driver.execute_script(
            "const root = document.documentElement; return root.scrollWidth - root.clientWidth;")
        check(wide <= 0, "the page is %d px wider than a 390 px window" % wide)
        page.screenshot("phone")

        step = "9. the target language"
        page.driver.set_window_size(1000, 1400)
        check_languages(page, args.url, beam)
    except AssertionError as e:
        print("page_test: %s: %s" % (step, e), file=sys.stderr)
        return 1
    finally:
        page.driver.quit()
    print("page_test: every check passed; screenshots in " + args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
