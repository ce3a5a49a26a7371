// Pi's part of the extension (after plugin_client.js). Pi loads every `.js`/`.ts` file of its
// extensions folders with jiti and calls the default export with its extension API. A
// `tool_call` handler that throws blocks the call in Pi, so nothing here throws: the supervisor
// fails open, as every plugin does.

const textOf = (content) => (Array.isArray(content) ? content : [])
  .filter((p) => p && p.type === "text" && typeof p.text === "string")
  .map((p) => p.text).join("\n");

export default function agentSupervisor(pi) {
  const send = (ctx, event, fields, seconds) => {
    let session = null;
    let cwd = process.cwd();
    try {
      session = ctx.sessionManager.getSessionId();
      if (typeof ctx.cwd === "string" && ctx.cwd) cwd = ctx.cwd;
    } catch {}
    if (typeof session !== "string" || !session) return Promise.resolve(null);
    return inOrder(session,
      () => ask({ session_id: session, hook_event_name: event, cwd, ...fields }, seconds));
  };
  const context = (answer) => (answer && typeof answer.context === "string" ? answer.context : null);

  pi.on("session_start", async (event, ctx) => {
    await send(ctx, "session_start", { reason: event.reason || null }, OTHER_S);
  });
  // the user's prompt; operator guidance the agent has not seen goes with it as a message
  pi.on("before_agent_start", async (event, ctx) => {
    const note = context(await send(ctx, "before_agent_start",
      { prompt: typeof event.prompt === "string" ? event.prompt : "" }, OTHER_S));
    if (note) return { message: { customType: "agent-supervisor", content: note, display: true } };
    return undefined;
  });
  // the assistant's text (before its calls, and its final answer)
  pi.on("message_end", async (event, ctx) => {
    const message = event.message || {};
    const text = message.role === "assistant" ? textOf(message.content).trim() : "";
    if (text) await send(ctx, "message.text", { text }, OTHER_S);
  });
  // a refusal's reason is the call's result, word for word (Pi runs no tool_result for it)
  pi.on("tool_call", async (event, ctx) => {
    const answer = await send(ctx, "tool_call",
      { tool_name: event.toolName, tool_input: event.input, call_id: event.toolCallId }, HOLD_S);
    if (answer && typeof answer.deny === "string") return { block: true, reason: answer.deny };
    return undefined;
  });
  // what the supervisor says about a result is added to the text the model reads
  pi.on("tool_result", async (event, ctx) => {
    const note = context(await send(ctx, "tool_result", {
      tool_name: event.toolName, tool_input: event.input, call_id: event.toolCallId,
      tool_output: textOf(event.content), is_error: event.isError === true,
    }, OTHER_S));
    if (!note) return undefined;
    const content = Array.isArray(event.content) ? [...event.content] : [];
    const last = content.length - 1;
    if (last >= 0 && content[last] && content[last].type === "text") {
      content[last] = { ...content[last], text: `${content[last].text}\n\n${note}` };
    } else {
      content.push({ type: "text", text: note });
    }
    return { content };
  });
  pi.on("session_shutdown", async (event, ctx) => {
    await send(ctx, "session_shutdown", { reason: event.reason || null }, OTHER_S);
  });
}
