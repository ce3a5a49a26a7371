// OpenCode's and Kilo's part of the plugin (after plugin_client.js).
const SOURCE = "Agent Supervisor";

export const AgentSupervisor = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const texts = new Map();    // session -> assistant texts not sent yet
  const textParts = new Set();
  const denied = new Set();   // calls the supervisor refused (their error is its reason)
  const failed = new Map();   // failed call -> what the supervisor added to its error

  const send = (session, event, fields, seconds) => {
    if (!session) return Promise.resolve(null);
    const run = async () => {
      const said = texts.get(session) || [];
      texts.delete(session);
      for (const text of said) {
        await ask({ session_id: session, hook_event_name: "message.text", cwd, text }, OTHER_S);
      }
      return ask({ session_id: session, hook_event_name: event, cwd, ...fields }, seconds);
    };
    return inOrder(session, run);
  };

  return {
    "chat.message": async (input, output) => {
      const prompt = (output.parts || [])
        .filter((p) => p && p.type === "text" && !p.synthetic && typeof p.text === "string")
        .map((p) => p.text).join("\n");
      const answer = await send(input.sessionID, "chat.message", { prompt }, OTHER_S);
      const last = (output.parts || []).filter((p) => p && p.type === "text" && !p.synthetic)
        .pop();
      if (last && answer && typeof answer.context === "string") {
        last.text = `${last.text}\n\n${answer.context}`;
      }
    },
    "tool.execute.before": async (input, output) => {
      const answer = await send(input.sessionID, "tool.execute.before",
        { tool_name: input.tool, tool_input: output.args, call_id: input.callID }, HOLD_S);
      if (answer && typeof answer.deny === "string") {
        denied.add(input.callID);
        throw new Error(answer.deny);
      }
    },
    "tool.execute.after": async (input, output) => {
      const answer = await send(input.sessionID, "tool.execute.after", {
        tool_name: input.tool, tool_input: input.args, call_id: input.callID,
        tool_output: output.output, metadata: output.metadata,
      }, OTHER_S);
      if (answer && typeof answer.context === "string") {
        output.output = `${output.output ?? ""}\n\n${answer.context}`;
      }
    },
    // Before each model request: a call that failed (the tool threw: no tool.execute.after)
    // is reported once, and what the supervisor says about it is added to the error the model
    // reads (the messages are rebuilt for every request, so it is added every time).
    "experimental.chat.messages.transform": async (_input, output) => {
      for (const message of output.messages || []) {
        for (const part of message.parts || []) {
          if (!part || part.type !== "tool" || !part.state || part.state.status !== "error") continue;
          const error = String(part.state.error ?? "");
          if (denied.has(part.callID) || error.startsWith(SOURCE)) continue;
          if (!failed.has(part.callID)) {
            const answer = await send(part.sessionID || message.info?.sessionID, "tool.error", {
              tool_name: part.tool, tool_input: part.state.input, call_id: part.callID, error,
            }, OTHER_S);
            failed.set(part.callID, answer && typeof answer.context === "string" ? answer.context : "");
          }
          const note = failed.get(part.callID);
          if (note && !error.endsWith(note)) part.state.error = `${error}\n\n${note}`;
        }
      }
    },
    event: async ({ event }) => {
      const p = (event && event.properties) || {};
      if (event.type === "session.created") {
        const info = p.info || {};
        await send(info.id || p.sessionID, "session.created",
          { parent_session_id: info.parentID || null }, OTHER_S);
      } else if (event.type === "message.part.updated") {
        const part = p.part || {};
        if (part.type === "text" && part.time && part.time.end && !part.synthetic
            && typeof part.text === "string" && part.text.trim() && !textParts.has(part.id)) {
          textParts.add(part.id);
          const said = texts.get(part.sessionID) || [];
          said.push(part.text);
          texts.set(part.sessionID, said);
        }
      } else if (event.type === "session.idle") {
        await send(p.sessionID, "session.idle", {}, OTHER_S);
      }
    },
  };
};
