"""The operator page's Cartesian jog buttons in a real browser (Debian's headless Chromium
through chromedriver, driven by selenium), as tests/operator_page.rs runs it while a jog session
of the simulated KR 16 runs: with a step of 10 (mm or °) chosen, a press on X+ in the base frame
moves the tool 10 mm along the base's x axis (to 2 %: the jog integrates its path) and keeps its orientation; in the tool frame, Z−
moves it 10 mm back along the tool's own z axis; A+ turns it 10° about the base's z axis and
keeps its position.

    python3 operator_jog.py PAGE_URL   (with its ?token=…)

Prints each move as JSON lines; exits non-zero with a message saying what was not as expected.
"""

import json
import math
import os
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

URL = sys.argv[1]
# The URL morc printed has the page's token: /state is read with it as the page reads it.
BASE, TOKEN = URL.split("?token=")
TIMEOUT = 60.0


def fail(message):
    print(f"operator jog test: {message}", file=sys.stderr)
    sys.exit(1)


def wait_for(what, condition, timeout=TIMEOUT):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    fail(f"waited {timeout:.0f} s for {what}")


def page_state():
    request = urllib.request.Request(BASE + "state", headers={"X-Morc-Token": TOKEN})
    with urllib.request.urlopen(request, timeout=10) as r:
        return json.loads(r.read())


def rotation(rpy_degrees):
    # The page's rpy: fixed axes x, y, z (R = Rz Ry Rx), as URDF.
    r, p, y = (math.radians(a) for a in rpy_degrees)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def turned(a, b):
    """The angle (°) between two orientations given as rpy (°)."""
    ra, rb = rotation(a), rotation(b)
    trace = sum(ra[k][i] * rb[k][i] for i in range(3) for k in range(3))
    return math.degrees(math.acos(max(-1.0, min(1.0, (trace - 1) / 2))))


def at_rest(s):
    # The simulated joints' velocity readings are noisy (hundredths of °/s): still is below 0.5 °/s.
    return all(abs(j["qd"]) < 0.5 for j in s["joints"])


def moved_from(before):
    """The state once the tool has moved (more than 5 mm or 5°) from `before` and come to rest."""
    def done():
        s = page_state()
        d = math.dist(s["tool"]["pos"], before["tool"]["pos"])
        return s if at_rest(s) and (d > 5 or turned(s["tool"]["rpy"], before["tool"]["rpy"]) > 5) else None
    return wait_for("the tool to move and come to rest", done)


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--window-size=1200,900"]:
    options.add_argument(flag)
options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='morc-chromium-')}")
os.environ["SE_OFFLINE"] = "true"
driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
try:
    driver.get(URL)
    wait_for("the jog session on the page", lambda: (page_state().get("command") or {}).get("name") == "jog" and driver.find_elements(By.ID, "jog-6+"))
    Select(driver.find_element(By.ID, "jog-step")).select_by_value("10")
    Select(driver.find_element(By.ID, "jog-speed")).select_by_visible_text("50")

    def press(button, frame, what):
        Select(driver.find_element(By.ID, "jog-frame")).select_by_value(frame)
        before = wait_for("the robot at rest", lambda: (lambda s: s if at_rest(s) else None)(page_state()))
        driver.find_element(By.ID, button).click()
        after = moved_from(before)
        d = [a - b for a, b in zip(after["tool"]["pos"], before["tool"]["pos"])]
        r0, r1 = rotation(before["tool"]["rpy"]), rotation(after["tool"]["rpy"])
        print(json.dumps({"button": button, "frame": frame, "moved_mm": d, "rpy_before": before["tool"]["rpy"], "rpy_after": after["tool"]["rpy"]}))
        return before, after, d, r0, r1

    # X+ in the base frame: 10 mm along x, nothing along y and z, the orientation kept.
    _, _, d, r0, r1 = press("jog-x+", "base", "X+")
    if abs(d[0] - 10) > 0.2 or abs(d[1]) > 0.05 or abs(d[2]) > 0.05:
        fail(f"X+ (base) moved the tool by {d} mm, not 10 mm along x")
    if max(abs(r0[i][k] - r1[i][k]) for i in range(3) for k in range(3)) > 1e-3:
        fail("X+ (base) turned the tool")

    # Z− in the tool frame: 10 mm back along the tool's own z axis (in base coordinates).
    _, _, d, r0, r1 = press("jog-z-", "tool", "Z- (tool)")
    z = [r0[i][2] for i in range(3)]
    if any(abs(d[i] + 10 * z[i]) > 0.2 for i in range(3)):
        fail(f"Z- (tool) moved the tool by {d} mm, not 10 mm back along its z axis {z}")
    if max(abs(r0[i][k] - r1[i][k]) for i in range(3) for k in range(3)) > 1e-3:
        fail("Z- (tool) turned the tool")

    # A+ in the base frame: 10° about the base's z axis, the tool's position kept.
    _, _, d, r0, r1 = press("jog-a+", "base", "A+")
    if any(abs(x) > 0.1 for x in d):
        fail(f"A+ (base) moved the tool by {d} mm")
    # R1 = Rz(10°) R0: the turn between them, in base axes, is 10° about z.
    turn = [[sum(r1[i][k] * r0[j][k] for k in range(3)) for j in range(3)] for i in range(3)]
    angle = math.degrees(math.atan2(turn[1][0], turn[0][0]))
    if abs(angle - 10) > 0.2 or abs(turn[2][2] - 1) > 1e-5:
        fail(f"A+ (base) turned the tool by {angle:.3f}° about z ({turn})")
    driver.save_screenshot(os.path.join(tempfile.gettempdir(), "morc-operator-jog.png"))
finally:
    driver.quit()
