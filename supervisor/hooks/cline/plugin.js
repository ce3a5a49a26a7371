// Agent Supervisor: every tool call of this agent is checked by the supervisor.
// Written by `supervisor install __TARGET__`; `supervisor uninstall __TARGET__` removes it.
// Each step is sent to the supervisor's hook client (a process, as for the agents with command
// hooks: it reaches the resident hook server, or starts one). Every wait is bounded here, and
// anything that goes wrong lets the agent go on, unchecked. Cline runs plugins in its hub daemon
// (with the daemon's environment) unless CLINE_SESSION_BACKEND_MODE=local.
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

const queues = new Map();   // session -> the promise of its last step (steps run in order)
const seen = new Set();     // assistant messages whose text was sent
const denied = new Set();   // calls the supervisor refused

function send(session, event, fields, seconds) {
  if (!session) return Promise.resolve(null);
  const run = () => ask({ session_id: session, hook_event_name: event, cwd: process.cwd(),
    ...fields }, seconds);
  const previous = queues.get(session) || Promise.resolve();
  const next = previous.then(run, run);
  queues.set(session, next.catch(() => null));
  return next.catch(() => null);
}

const sessionOf = (ctx) => (ctx && ctx.snapshot && ctx.snapshot.conversationId) || null;

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p && p.type === "text" && typeof p.text === "string")
    .map((p) => p.text).join("\n");
}

// The assistant's text before a call: in the message that holds the call, sent once.
async function said(ctx) {
  const messages = (ctx.snapshot && ctx.snapshot.messages) || [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message || message.role !== "assistant") continue;
    if (seen.has(message.id)) return;
    seen.add(message.id);
    const text = textOf(message.content).trim();
    if (text) await send(sessionOf(ctx), "message.text", { text }, OTHER_S);
    return;
  }
}

export default {
  name: "agent-supervisor",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    beforeRun: async (ctx) => {
      const messages = (ctx.snapshot && ctx.snapshot.messages) || [];
      const last = [...messages].reverse().find((m) => m && m.role === "user");
      await send(sessionOf(ctx), "beforeRun", { prompt: last ? textOf(last.content) : "" },
        OTHER_S);
      return undefined;
    },
    beforeTool: async (ctx) => {
      await said(ctx);
      const call = ctx.toolCall || {};
      const answer = await send(sessionOf(ctx), "beforeTool",
        { tool_name: call.toolName, tool_input: ctx.input, call_id: call.toolCallId }, HOLD_S);
      if (answer && typeof answer.deny === "string") {
        denied.add(call.toolCallId);
        return { skip: true, reason: answer.deny };
      }
      return undefined;
    },
    afterTool: async (ctx) => {
      const call = ctx.toolCall || {};
      if (denied.has(call.toolCallId)) return undefined;
      const result = ctx.result || {};
      const answer = await send(sessionOf(ctx), "afterTool", {
        tool_name: call.toolName, tool_input: ctx.input, call_id: call.toolCallId,
        tool_output: result.output, is_error: result.isError === true,
        duration_ms: ctx.durationMs,
      }, OTHER_S);
      if (answer && typeof answer.context === "string") return { appendContext: answer.context };
      return undefined;
    },
    afterRun: async (ctx) => {
      const result = ctx.result || {};
      await send(sessionOf(ctx), "afterRun",
        { text: result.outputText || null, status: result.status || null }, OTHER_S);
      return undefined;
    },
  },
};
