#!/usr/bin/env bash
# Debian's chromium and its driver for the browser test (tests/test_browser.py drives them with Selenium; no
# browser build is downloaded). Needs root and apt-get; elsewhere it says so and the test skips with the reason.
set -uo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "install_browser.sh: not root with apt-get; the browser test will be skipped" >&2
    exit 0
fi
if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver) >/dev/null; then
    echo "install_browser.sh: apt-get could not install chromium; the browser test will be skipped" >&2
fi
exit 0
