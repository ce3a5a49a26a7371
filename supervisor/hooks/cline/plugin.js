// Cline's part of the plugin (after plugin_client.js). Cline runs plugins in its hub daemon
// (with the daemon's environment) unless CLINE_SESSION_BACKEND_MODE=local, in a sandbox that
// fails the whole run when a hook call takes 3 s (LIMIT_S): every hook is `bounded`.

let workspace = null;       // the workspace Cline gave `setup` (a hub daemon's cwd is its own)
const seen = new Set();     // assistant messages whose text was sent
const denied = new Set();   // calls the supervisor refused

function send(session, event, fields, seconds) {
  if (!session) return Promise.resolve(null);
  const run = () => ask({ session_id: session, hook_event_name: event,
    cwd: workspace || process.cwd(), ...fields }, seconds);
  return inOrder(session, run);
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

// The supervisor's refusal of a call, in time for Cline (bounded), or undefined: it runs. The
// supervisor is given the time Cline leaves (a hold ends with the call refused as on hold); the
// other steps have their usual time and finish, recorded, after a late answer is dropped.
const CHECK_S = Math.min(HOLD_S, LIMIT_S - LIMIT_MARGIN_S);
const check = bounded(async (ctx) => {
  await said(ctx);
  const call = ctx.toolCall || {};
  const answer = await send(sessionOf(ctx), "beforeTool",
    { tool_name: call.toolName, tool_input: ctx.input, call_id: call.toolCallId }, CHECK_S);
  if (answer && typeof answer.deny === "string") return { skip: true, reason: answer.deny };
  return undefined;
});

export default {
  name: "agent-supervisor",
  manifest: { capabilities: ["hooks"] },
  setup: (_api, ctx) => {
    const root = ctx && ctx.workspaceInfo && ctx.workspaceInfo.rootPath;
    if (typeof root === "string" && root) workspace = root;
  },
  hooks: {
    beforeRun: bounded(async (ctx) => {
      const messages = (ctx.snapshot && ctx.snapshot.messages) || [];
      const last = [...messages].reverse().find((m) => m && m.role === "user");
      const answer = await send(sessionOf(ctx), "beforeRun",
        { prompt: last ? textOf(last.content) : "" }, OTHER_S);
      if (answer && typeof answer.context === "string") return { appendContext: answer.context };
      return undefined;
    }),
    beforeTool: async (ctx) => {
      const refusal = await check(ctx);
      if (refusal) denied.add((ctx.toolCall || {}).toolCallId); // only a refusal Cline heard
      return refusal;
    },
    afterTool: bounded(async (ctx) => {
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
    }),
    afterRun: bounded(async (ctx) => {
      const result = ctx.result || {};
      await send(sessionOf(ctx), "afterRun",
        { text: result.outputText || null, status: result.status || null }, OTHER_S);
      return undefined;
    }),
  },
};
