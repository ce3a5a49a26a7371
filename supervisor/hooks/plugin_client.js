// Agent Supervisor: every tool call of this agent is checked by the supervisor.
// Written by `supervisor install __TARGET__`; `supervisor uninstall __TARGET__` removes it.
// Each step is sent to the supervisor's hook client (a process, as for the agents with command
// hooks: it reaches the resident hook server, or starts one). Every wait is bounded here (the
// agent gives plugins no timeout), and anything that goes wrong lets the agent go on, unchecked.
// (Made from supervisor/hooks/plugin_client.js and the agent's own part.)
import { spawn } from "node:child_process";

const HOOK = __HOOK__;
const HOLD_S = __HOLD_S__;
const OTHER_S = __OTHER_S__;
const GRACE_MS = 2000;

function ask(payload, seconds) {
  return new Promise((resolve) => {
    let done = false;
    let timer = null;
    const chunks = [];
    const finish = (value) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      resolve(value);
    };
    let child;
    try {
      child = spawn(HOOK[0], [...HOOK.slice(1), "--timeout", String(seconds)],
        { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      finish(null);
      return;
    }
    timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
      finish(null);
    }, seconds * 1000 + GRACE_MS);
    child.on("error", () => finish(null));
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.on("close", () => {
      try {
        const text = Buffer.concat(chunks).toString("utf8").trim();
        const answer = text ? JSON.parse(text) : null;
        finish(answer && typeof answer === "object" ? answer : null);
      } catch {
        finish(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

// The steps of one session run one after another, so a result is recorded before the next call
// is checked; `run` gives the step's answer (null: none).
const queues = new Map();
function inOrder(session, run) {
  const previous = queues.get(session) || Promise.resolve();
  const next = previous.then(run, run);
  queues.set(session, next.catch(() => null));
  return next.catch(() => null);
}
