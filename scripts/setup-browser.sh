#!/usr/bin/env bash
# Debian's chromium and chromium-driver for the console's browser tests (tests/console/
# test_app_browser.py drives them with Selenium; nothing downloads a browser or a driver at run
# time), installed idempotently with apt when they are missing. Without apt, or as a user who
# cannot install, it says so and the browser tests skip.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  echo "==> chromium and chromedriver are installed" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "==> apt-get not found: install chromium and chromium-driver yourself; the browser tests will skip" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "==> not root and no sudo: install chromium and chromium-driver; the browser tests will skip" >&2
    exit 0
  fi
fi
echo "==> installing chromium and chromium-driver (apt)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -q --no-install-recommends chromium chromium-driver >&2; then
  $sudo apt-get update -q >&2
  $sudo apt-get install -y -q --no-install-recommends chromium chromium-driver >&2
fi
