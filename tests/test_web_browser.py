"""A real browser on `supervisor web`: headless Chromium (the system's, through Playwright) at a
phone's 390x844 viewport answers the escalation of a live demo agent, and the agent applies it;
the link of the notification leads to that escalation; an agent that died is refused with the
terminal's words; without the token nothing is served."""

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.guard_helpers import of_type, start_demo, wait_for
from tests.notify_helpers import Receiver, write_config
from tests.web_helpers import Web

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 3}


@pytest.fixture
def browser():
    required = os.environ.get("SUPERVISOR_REQUIRE_BROWSER") == "1"  # CI: never skip
    try:
        from playwright import sync_api
    except ImportError:
        if required:
            raise
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        if required:
            pytest.fail(f"no chromium at {CHROMIUM} (apt-get install chromium)")
        pytest.skip("no chromium installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


def test_a_phone_answers_a_live_agent_from_the_notification_link(
        root: Path, tmp_path: Path, browser) -> None:
    web = Web(root)
    agents = []
    try:
        with Receiver() as rx:
            write_config(tmp_path / "config", [rx.url], burst_s=0.2, link=web.base)
            agents.append(start_demo(root, "phone1", "loop", tmp_path / "w1", deadline=120))
            wait_for(root, "phone1", lambda e: bool(of_type(e, "notification")))
            [message] = rx.messages
        link = next(line for line in message["message"].splitlines()
                    if line.startswith("http"))
        assert link == f"{web.base}/#s=phone1"

        page = browser.new_context(**PHONE).new_page()
        assert page.goto(link).status == 401  # the link alone: nothing served
        assert "phone1" not in page.content()
        opened = page.goto(web.url)  # the printed URL: its code becomes a session cookie
        assert "code" not in page.url and opened.request.redirected_from is not None
        # what the browser's history keeps (the redirect chain) opens nothing a second time
        other = browser.new_context(**PHONE).new_page()
        assert other.goto(opened.request.redirected_from.url).status == 401
        assert "phone1" not in other.content()
        [cookie] = page.context.cookies()
        assert cookie["name"] == f"supervisor_session_{web.port}" and cookie["httpOnly"]
        assert cookie["value"] != web.token
        page.goto(link)
        target = page.locator("section.card.target")
        target.wait_for()
        assert "phone1 · esc-1" in target.inner_text()
        assert "notified via json://…" in target.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no side scroll
        page.fill("#who", "ana")
        # the evidence the terminal shows: each evidence call with its result
        target.locator("summary").click()
        target.locator(".step").first.wait_for()
        assert "call" in target.locator("details").inner_text()
        target.get_by_role("button", name="Guidance").click()
        target.locator("textarea").fill("Read the failing assertion, then fix add().")
        target.get_by_role("button", name="Send guidance").click()
        page.wait_for_selector("text=guidance by ana: applied")
        # the escalation leaves the queue; its card and result stay until dismissed
        page.wait_for_function("() => document.querySelector('section.card.answered .note')")
        page.wait_for_timeout(2500)  # a refresh later: still there
        assert "guidance by ana: applied" in page.locator("section.card.answered").inner_text()
        assert "Nothing needs you." not in page.locator("#queue").inner_text()
        page.locator("section.card.answered").get_by_role("button", name="Dismiss").click()
        page.wait_for_selector("text=Nothing needs you.")

        evs = wait_for(root, "phone1", lambda e: bool(of_type(e, "decision_applied")))
        [applied] = of_type(evs, "decision_applied")
        assert applied["action"] == "guidance" and applied["escalation_id"] == "esc-1"
        control = (root / "sessions" / "phone1" / "control.jsonl").read_text()
        assert json.loads(control.splitlines()[0])["operator"] == "ana"
        # the agent acted on it: it went on with tool calls after the decision
        wait_for(root, "phone1", lambda e: any(x["type"] == "tool_call"
                                               and x["seq"] > applied["seq"] for x in e))
        # answering again (another tab, before it refreshed): the terminal's refusal
        again = page.evaluate("""async () => (await fetch('/api/answer', {method: 'POST',
            headers: {'Content-Type': 'application/json', 'X-Supervisor': '1'},
            body: JSON.stringify({session: 'phone1', escalation_id: 'esc-1',
                                  action: 'approve', operator: 'bo'})})).json()""")
        assert again == {"refused": "already answered by ana: guidance"}

        # an agent that died while it waited: shown apart, and refused like the terminal
        agents.append(start_demo(root, "phone2", "loop", tmp_path / "w2", deadline=120))
        wait_for(root, "phone2", lambda e: bool(of_type(e, "escalation")))
        agents[-1].kill()
        agents[-1].wait(timeout=30)
        page.goto(f"{web.base}/#s=phone2")
        dead = page.locator("#stale section.card")
        dead.wait_for(timeout=15000)
        assert "agent not running" in dead.inner_text()
        dead.get_by_role("button", name="Approve").click()
        # asked first, as the terminal asks for `y`: nothing is sent on one tap
        assert "This cannot be taken back." in dead.inner_text()
        dead.get_by_role("button", name="Yes, approve").click()
        page.wait_for_selector("text=refused: the agent is not running")
        assert not (root / "sessions" / "phone2" / "control.jsonl").exists() or \
            (root / "sessions" / "phone2" / "control.jsonl").read_text() == ""
    finally:
        for agent in agents:
            agent.kill()
            agent.wait(timeout=30)
        web.stop()


def test_without_the_token_the_browser_sees_nothing(root: Path, tmp_path: Path,
                                                    browser) -> None:
    from tests.notify_helpers import escalate

    escalate(root, "hidden")
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        for url in (web.base + "/", web.base + "/api/queue", web.base + "/?token=nope",
                    web.base + f"/?token={web.token}", web.base + "/login?code=nope"):
            assert page.goto(url).status == 401
            assert "hidden" not in page.content()
    finally:
        web.stop()


def test_a_phone_rolls_back_to_the_checkpoint_it_chose_and_splits(
        root: Path, tmp_path: Path, browser) -> None:
    """The rollback offers the session's checkpoints (the one before the escalation chosen);
    the one tapped is the one written and rolled back to. A split takes its steps from a box,
    one a line, and the agent works the plan."""
    web = Web(root)
    agents = [start_demo(root, name, "loop", tmp_path / name, deadline=120)
              for name in ("phone3", "phone4")]
    try:
        evs = wait_for(root, "phone3", lambda e: bool(of_type(e, "escalation")))
        assert len(of_type(evs, "checkpoint")) >= 2
        page = browser.new_context(**PHONE).new_page()
        page.goto(web.url)
        page.fill("#who", "ana")
        card = page.locator("section.card", has_text="phone3 · esc-1")
        card.get_by_role("button", name="Rollback").click()
        radios = card.locator("input[type=radio]")
        radios.first.wait_for()
        ids = [radios.nth(i).get_attribute("value") for i in range(radios.count())]
        assert ids[0] == "cp-2" and radios.first.is_checked()  # taken before the escalation
        assert "taken before this escalation" in card.inner_text()
        assert "throws away: calc.py" in card.inner_text()
        card.locator("label.cp", has_text="cp-1").click()
        card.get_by_role("button", name="Roll back to cp-1").click()
        page.wait_for_selector("text=rollback by ana: applied")
        [decision] = [json.loads(line) for line in
                      (root / "sessions" / "phone3" / "control.jsonl").read_text().splitlines()]
        assert (decision["action"], decision["checkpoint_id"]) == ("rollback", "cp-1")
        evs = wait_for(root, "phone3", lambda e: bool(of_type(e, "rollback")))
        assert of_type(evs, "rollback")[0]["checkpoint_id"] == "cp-1"

        wait_for(root, "phone4", lambda e: bool(of_type(e, "escalation")))
        card = page.locator("section.card", has_text="phone4 · esc-1")
        card.get_by_role("button", name="Split").click()
        card.locator("textarea").fill("Read the failing test\n\n  Fix mul() in calc.py  \n")
        card.get_by_role("button", name="Send split").click()
        page.wait_for_selector("text=split by ana: applied")
        [split] = [json.loads(line) for line in
                   (root / "sessions" / "phone4" / "control.jsonl").read_text().splitlines()]
        assert split["action"] == "split"
        assert split["tasks"] == ["Read the failing test", "Fix mul() in calc.py"]
        evs = wait_for(root, "phone4", lambda e: bool(of_type(e, "decision_applied")))
        assert of_type(evs, "decision_applied")[0]["action"] == "split"
    finally:
        for agent in agents:
            agent.kill()
            agent.wait(timeout=30)
        web.stop()


def test_a_cancelled_answer_sends_nothing_and_the_sign_in_page_fits_a_phone(
        root: Path, browser) -> None:
    from tests.notify_helpers import escalate

    escalate(root, "s1")
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        assert page.goto(web.base + "/").status == 401
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert "supervisor web --login" in page.inner_text("body")
        font = page.evaluate("getComputedStyle(document.body).fontSize")
        assert float(font.rstrip("px")) >= 16  # readable without zooming
        page.goto(web.url)
        page.fill("#who", "ana")
        card = page.locator("section.card", has_text="esc-1")
        for name in ("Skip task", "Abort"):
            card.get_by_role("button", name=name).click()
            assert "This cannot be taken back." in card.inner_text()
            card.get_by_role("button", name="Cancel").click()
        card.get_by_role("button", name="Approve").wait_for()
        assert not (root / "sessions" / "s1" / "control.jsonl").exists()
    finally:
        web.stop()


def test_a_store_still_loading_is_not_an_empty_queue(root: Path, browser) -> None:
    """While the server reads a large store a first time, the page says it is loading (the
    queue it has is not yet what needs you). The server's answer is the one `LiveQueue`
    gives before its first read (`tests/test_web.py`), replayed to the page here."""
    from supervisor.web.queue import LiveQueue
    from tests.notify_helpers import escalate

    escalate(root, "s1")
    from supervisor.store.local import LocalStore

    before = LiveQueue(LocalStore(root)).snapshot()
    before["total"] = 100000
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        page.goto(web.url)
        page.route("**/api/queue", lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(before)))
        page.reload()
        page.wait_for_selector("text=Loading 100,000 sessions")
        assert "Nothing needs you." not in page.locator("#queue").inner_text()
        assert page.locator("#title").inner_text() == "Needs you (loading…)"
    finally:
        web.stop()


def test_an_answer_written_before_the_agent_reads_it_is_followed_to_its_outcome(
        root: Path, browser) -> None:
    """No agent reads the answer within the 5 s the server waits: the card says it was
    written, and nothing more; when the agent side applies it later, the card says so, in the
    agent side's words."""
    from supervisor.store.writer import event_writer
    from tests.notify_helpers import escalate

    escalate(root, "s1")
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        page.goto(web.url)
        page.fill("#who", "ana")
        card = page.locator("section.card", has_text="esc-1")
        card.get_by_role("button", name="Skip task").click()
        card.get_by_role("button", name="Yes, skip").click()
        page.wait_for_selector("text=skip by ana: written; the agent has not picked it up yet")
        [decision] = [json.loads(line) for line in
                      (root / "sessions" / "s1" / "control.jsonl").read_text().splitlines()]
        with event_writer(root, "s1") as w:  # the agent side, later
            w.append({"type": "decision_applied", "escalation_id": "esc-1",
                      "decision_id": decision["decision_id"], "action": "skip",
                      "outcome": "task t1 skipped"})
        page.wait_for_selector("text=skip by ana: applied: task t1 skipped")
        assert "no longer waiting" in page.locator("section.card.answered").inner_text()
    finally:
        web.stop()


def test_a_refusal_gives_way_to_how_the_escalation_was_decided(root: Path, browser) -> None:
    """Two operators: bob's answer is on its way, so ana's tap is refused "(the agent has not
    applied it yet)"; that line stayed on her card, with "no longer waiting for an answer",
    after the agent applied bob's answer. The card now says how it was decided."""
    from supervisor.operator.send import send_decision
    from supervisor.store.writer import event_writer
    from tests.notify_helpers import escalate

    escalate(root, "s1")
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        page.goto(web.url)
        page.fill("#who", "ana")
        card = page.locator("section.card", has_text="esc-1")
        card.get_by_role("button", name="Approve").wait_for()
        bob = send_decision(root, "s1", "skip", escalation_id="esc-1", operator="bob")
        card.get_by_role("button", name="Approve").click()
        card.get_by_role("button", name="Yes, approve").click()
        page.wait_for_selector("text=refused: already answered by bob: skip (the agent has not "
                               "applied it yet)")
        with event_writer(root, "s1") as w:  # the agent side applies bob's answer
            w.append({"type": "decision_applied", "escalation_id": "esc-1",
                      "decision_id": bob, "action": "skip", "operator": "bob",
                      "outcome": "task t1 skipped"})
        page.wait_for_selector(f"text=already answered by bob: skip ({bob}) task t1 skipped")
        said = page.locator("section.card.answered").inner_text()
        assert "not applied it yet" not in said and "Dismiss" in said
    finally:
        web.stop()


def test_agent_text_in_one_unbroken_run_does_not_widen_the_phone_page(
        root: Path, browser) -> None:
    """A long agent name, task, command or reason without a space wraps inside its card: the
    page never becomes wider than the phone (it was 1,600 px wide, to be panned sideways)."""
    from supervisor.store.writer import event_writer

    with event_writer(root, "s-" + "x" * 60) as w:
        w.append({"type": "session_start", "agent": "a" * 80, "task": "T" * 300, "cwd": None,
                  "pid": None})
        w.append({"type": "tool_call", "call_id": "c1", "tool": "Bash",
                  "args": {"command": "y" * 2000}})
        w.append({"type": "tool_result", "call_id": "c1", "ok": False, "output": "z" * 3000,
                  "output_bytes": 3000, "output_hash": "h", "error": "e" * 500})
        w.append({"type": "escalation", "escalation_id": "esc-1", "level": 3,
                  "reason": "R" * 1500, "evidence": [2], "options": ["approve", "skip"],
                  "deadline_ts": None, "fallback": "skip", "kind": "detection"})
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        page.goto(web.url)
        card = page.locator("section.card", has_text="esc-1")
        card.locator("summary").click()
        card.locator(".step.failed").wait_for()  # the evidence is drawn
        assert card.locator("summary").inner_text() == "Evidence (1 step) and recent steps"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert page.evaluate("document.body.scrollWidth") <= 390
    finally:
        web.stop()


def test_the_page_says_when_the_server_is_gone_and_comes_back_after_a_restart(
        root: Path, browser) -> None:
    """The server stops (a restart, a crash): the page keeps its cards but says since when
    they may be out of date, in words (not a JavaScript error), and is itself again, still
    signed in, once the server answers on its port again."""
    from tests.notify_helpers import escalate

    escalate(root, "s1")
    web = Web(root)
    page = browser.new_context(**PHONE).new_page()
    page.goto(web.url)
    page.locator("section.card", has_text="esc-1").wait_for()
    port = web.port
    web.stop()
    status = page.locator("#status")
    status.filter(has_text="cannot reach the supervisor since").wait_for(timeout=15000)
    said = status.inner_text()
    assert "may be out of date" in said and "Error" not in said, said
    assert page.locator("main.unreachable").count() == 1
    again = Web(root, "--port", str(port))
    try:
        status.filter(has_text="updated").wait_for(timeout=15000)
        assert page.locator("main.unreachable").count() == 0
        assert page.locator("section.card", has_text="esc-1").count() == 1
    finally:
        again.stop()


def test_a_deadline_says_what_will_happen_as_the_terminal_says_it(root: Path, browser) -> None:
    """An agent that is not running gets no fallback at its deadline (the agent side applies
    it), a deadline already passed is not 'answer within 0:00', and without a deadline no
    fallback applies ('no deadline (fallback skip)' said one would): the card says what the
    terminal's prompt says."""
    import time

    from supervisor.store.liveness import THIS_HOST
    from supervisor.store.writer import event_writer
    from tests.notify_helpers import escalate
    from tests.test_operator_liveness import dead_pid

    with event_writer(root, "gone") as w:
        w.append({"type": "session_start", "agent": "test", "task": "fix it", "cwd": None,
                  "pid": dead_pid(), "host": THIS_HOST})
        w.append({"type": "escalation", "escalation_id": "esc-1", "level": 3,
                  "reason": "same call, same error", "evidence": [1],
                  "options": ["approve", "skip"], "deadline_ts": time.time() + 3600,
                  "fallback": "skip", "kind": "detection"})
    escalate(root, "late", deadline=time.time() - 60)  # passed, the fallback not recorded yet
    escalate(root, "held")  # no deadline: no fallback ever applies
    web = Web(root)
    try:
        page = browser.new_context(**PHONE).new_page()
        page.goto(web.url)
        gone = page.locator("#stale section.card", has_text="gone")
        late = page.locator("#queue section.card", has_text="late")
        gone.wait_for()
        late.wait_for()
        assert gone.locator(".deadline").inner_text() == (
            "no deadline applies: the agent is not running, no answer can reach it")
        assert late.locator(".deadline").inner_text() == "deadline passed: skip applies"
        held = page.locator("#queue section.card", has_text="held")
        assert held.locator(".deadline").inner_text() == (
            "no deadline: it holds until someone decides")
    finally:
        web.stop()
