"""The operator page in a real browser (Debian's headless Chromium through chromedriver,
driven by selenium), as tests/operator_page.rs runs it: a person opens the page while
`morc --live` runs a program, reads the robot off it, takes a screenshot, presses hold and
resume and moves the override slider.

    python3 operator_page.py PAGE_URL WORKDIR SCREENSHOT

PAGE_URL is the URL morc printed, with its token (http://127.0.0.1:PORT/?token=…). Before the
operator's presses, a page of another origin (served by a python http.server on another port)
tries to set the override and hold the robot with no-cors fetches as issue 26 found they could:
the robot's override and state must not change.

WORKDIR is the program's directory: its standard output (out.txt) has the lines the program
prints from robot:state(); writing WORKDIR/go starts its long motion. Exits non-zero with a
message saying what was not as expected.
"""

import http.server
import json
import os
import threading
import re
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

URL, WORKDIR, SHOT = sys.argv[1], sys.argv[2], sys.argv[3]
BASE, TOKEN = URL.split("?token=")
# Generous: the machine may be loaded; every wait ends as soon as its condition holds.
TIMEOUT = 60.0


def fail(message):
    print(f"operator page test: {message}", file=sys.stderr)
    sys.exit(1)


def wait_for(what, condition, timeout=TIMEOUT):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    fail(f"waited {timeout:.0f} s for {what}")


def program_lines(prefix):
    """The program's lines starting with `prefix`, as dicts of key=value."""
    try:
        with open(os.path.join(WORKDIR, "out.txt")) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        if line.startswith(prefix + " "):
            out.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
    return out


def last_state():
    states = program_lines("state")
    return states[-1] if states else None


def page_state():
    request = urllib.request.Request(BASE + "state", headers={"X-Morc-Token": TOKEN})
    with urllib.request.urlopen(request, timeout=10) as r:
        return json.loads(r.read())


# A page of another origin (another port) that tries what issue 26's attacker did: no-cors
# POSTs to the operator page, as a form or a fetch can send them. It says when it has sent them.
EVIL = f"""<!doctype html><title>evil</title><script>
(async () => {{
  const page = "{BASE.rstrip('/')}";
  const tries = [
    ["/override", '{{"percent":5}}'], ["/hold", "{{}}"],
    ["/override?percent=5", ""], ["/hold", ""],
  ];
  for (const [path, body] of tries) {{
    for (const type of ["application/json", "text/plain"]) {{
      try {{ await fetch(page + path, {{ method: "POST", mode: "no-cors", headers: {{ "Content-Type": type }}, body }}); }} catch (e) {{}}
    }}
  }}
  document.title = "sent";
}})();
</script>"""


class Evil(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = EVIL.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
threading.Thread(target=evil.serve_forever, daemon=True).start()


def numbers(text):
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)]


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--window-size=1200,800"]:
    options.add_argument(flag)
profile = tempfile.mkdtemp(prefix="morc-chromium-")
options.add_argument(f"--user-data-dir={profile}")
# Debian's chromedriver: selenium must not fetch a driver or a browser of its own.
os.environ["SE_OFFLINE"] = "true"
driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
try:
    driver.get(URL)
    text = lambda id: driver.find_element(By.ID, id).text

    # The robot holding at home, as the program's robot:state() has it.
    wait_for("the page to show the robot", lambda: "KR 16" in text("robot") and driver.find_elements(By.ID, "joint-6"))
    home = program_lines("home")[0]
    q_home = [float(x) for x in home["q"].split(",")]
    tool_home = [float(x) for x in home["tool"].split(",")]
    def page_q():
        return [numbers(driver.find_element(By.ID, f"joint-{i}").find_elements(By.TAG_NAME, "td")[1].text)[0] for i in range(1, 7)]
    shown = wait_for("the joints on the page", lambda: page_q() if all(abs(a - b) < 0.01 for a, b in zip(page_q(), q_home)) else None, 10)
    tool_shown = numbers(text("tool"))[:3]
    if any(abs(a - b) > 0.1 for a, b in zip(tool_shown, tool_home)):
        fail(f"the tool shown {tool_shown} mm is not the robot's {tool_home}")
    if text("status") not in ("holding", "idle"):
        fail(f"status '{text('status')}' while the robot holds")
    print(f"page shows q {shown}, tool {tool_shown}: the robot's")

    # The long motion starts; the page shows it moving with its progress.
    open(os.path.join(WORKDIR, "go"), "w").close()
    wait_for("the page to show the motion", lambda: text("status") == "moving" and "long move" in text("command"))
    s0 = wait_for("a tick with progress", lambda: (lambda s: s if s.get("command") and s["command"].get("progress", 0) > 0 else None)(page_state()))
    time.sleep(1.0)
    s1 = page_state()
    if not s1.get("command"):
        fail("the motion ended within a second of starting")
    fast = (s1["command"]["progress"] - s0["command"]["progress"]) / (s1["tick"] - s0["tick"])
    print(f"progress per tick at 100 %: {fast:.3e}")
    wait_for("the progress bar", lambda: float(driver.find_element(By.ID, "progress").get_attribute("value")) > 0)
    driver.save_screenshot(SHOT)

    # Another site's page in a second tab tries to slow and hold the robot: nothing changes.
    page_tab = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(f"http://127.0.0.1:{evil.server_address[1]}/")
    wait_for("the other site's page to send its requests", lambda: driver.title == "sent", 20)
    time.sleep(0.3)
    s = page_state()
    if s["override"] != 100 or s["state"] != "moving":
        fail(f"a page of another origin changed the robot: override {s['override']} %, state {s['state']}")
    print(f"a page of another origin sent no-cors POSTs: override {s['override']} %, state {s['state']}")
    driver.close()
    driver.switch_to.window(page_tab)

    # Hold: the program's robot:state() says paused, and the joints come to rest.
    driver.find_element(By.ID, "hold").click()
    wait_for("the robot to hold (paused, |qd| < 0.5 °/s)", lambda: (lambda s: s and s["paused"] == "true" and float(s["qd"]) < 0.5)(last_state()))
    wait_for("the page to say paused (and that alone)", lambda: text("status") == "paused")

    def at_rest():
        # Half a second of ticks in which the motion did not go on along its path.
        a = last_state()
        time.sleep(0.5)
        b = last_state()
        return (a, b) if a["progress"] == b["progress"] and int(b["tick"]) > int(a["tick"]) else None
    held, still = wait_for("the held motion to stay where it stopped on its path", at_rest, 10)
    # Held, the page shows where the robot is.
    q_held = [float(x) for x in still["q"].split(",")]
    wait_for("the held joints on the page", lambda: all(abs(a - b) < 0.01 for a, b in zip(page_q(), q_held)), 10)
    print(f"held at progress {still['progress']}, q {q_held}")

    # Resume: it moves on.
    driver.find_element(By.ID, "resume").click()
    wait_for("the robot to move on", lambda: (lambda s: s and s["paused"] == "false" and float(s["progress"]) > float(held["progress"]) + 0.01)(last_state()))

    # Override 20 % with the slider (Page Down: 10 % a press): the motion slows to a fifth.
    slider = driver.find_element(By.ID, "override")
    slider.send_keys(Keys.PAGE_DOWN * 8)
    wait_for("the override at 20 %", lambda: (lambda s: s if s.get("command") and abs(s["command"].get("override_now", 0) - 20) < 0.01 else None)(page_state()))
    if text("override-value") != "20":
        fail(f"the slider shows {text('override-value')} %")
    s0 = page_state()
    time.sleep(1.0)
    s1 = page_state()
    slow = (s1["command"]["progress"] - s0["command"]["progress"]) / (s1["tick"] - s0["tick"])
    print(f"progress per tick at 20 %: {slow:.3e} ({slow / fast:.3f} of full speed)")
    if abs(slow / fast - 0.2) > 0.01:
        fail(f"at 20 % the motion moves at {slow / fast:.3f} of its speed at 100 %")

    # Back to 100 %: it finishes.
    slider.send_keys(Keys.END)
    done = wait_for("the program to finish", lambda: program_lines("done"))
    if done[0]["ok"] != "true":
        fail(f"the motion ended with {done[0]}")
    wait_for("the page to show the finished run", lambda: "long move: finished" in text("last-run") and text("status") == "idle")
    print("finished:", text("last-run"))
    open(os.path.join(WORKDIR, "bye"), "w").close()
finally:
    driver.quit()
    evil.shutdown()
