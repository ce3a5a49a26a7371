// Agent Supervisor: every tool call of this agent is checked by the supervisor.
// Written by `supervisor install __TARGET__`; `supervisor uninstall __TARGET__` removes it.
// Each step is sent to the supervisor's resident hook server over its Unix socket, from inside
// the agent (no process per step), trusted as the hook client trusts it; when that cannot be done
// (no server, one not trusted or of another version), to the supervisor's hook client (a process,
// as for the agents with command hooks: it starts the server). Every wait is bounded here (the
// agent gives plugins no timeout), and anything that goes wrong lets the agent go on, unchecked.
// (Made from supervisor/hooks/plugin_client.js and the agent's own part.)
import { spawn } from "node:child_process";
import { closeSync, lstatSync, openSync } from "node:fs";
import { createConnection } from "node:net";

const HOOK = __HOOK__;
const SERVER = __SERVER__;
const HOLD_S = __HOLD_S__;
const OTHER_S = __OTHER_S__;
const LIMIT_S = __LIMIT_S__; // the agent's own bound on one hook call (0: none), see bounded
const LIMIT_MARGIN_S = 0.5;  // an answer is given this long before that bound
const GRACE_MS = 2000;
const REPLY_MARGIN_S = 0.5; // supervisor.hooks.client.REPLY_MARGIN_S
const FALLBACK = Symbol("run the hook client");

async function ask(payload, seconds) {
  const answer = await relay(payload, seconds).catch(() => FALLBACK);
  return answer === FALLBACK ? runClient(payload, seconds) : answer;
}

// An absolute path Python's os.path.abspath leaves as it is (else the hook client decides).
function plain(path) {
  if (typeof path !== "string" || !path.startsWith("/")) return null;
  if (path === "/") return path;
  if (path.endsWith("/") || /\/\.{0,2}\//.test(path) || /\/\.{1,2}$/.test(path)) return null;
  return path;
}

// abspath(expanduser(value)) as supervisor.hooks.client computes it, or null.
function absolute(value) {
  const home = process.env.HOME;
  if (value === "~" || value.startsWith("~/")) return home ? plain(home + value.slice(1)) : null;
  return plain(value);
}

// client.shared_path: PATH without the entries an agent CLI adds for one run (client._per_run:
// Codex's `.../arg0*/codex-arg0*`).
function sharedPath(path) {
  return path.split(":").filter((entry) => {
    const cut = entry.lastIndexOf("/");
    const parent = cut < 0 ? "" : entry.slice(0, cut);
    return !(entry.slice(cut + 1).startsWith("codex-arg0") &&
      parent.slice(parent.lastIndexOf("/") + 1).startsWith("arg0"));
  }).join(":");
}

// client.socket_path: <root>/run/hook-<server_key>.sock; null when the hook client must decide.
function where() {
  const env = process.env;
  if (!SERVER || process.platform !== "linux" || typeof process.getuid !== "function") return null;
  let root = SERVER.root || env.SUPERVISOR_HOME || "";
  if (!root) {
    const state = env.XDG_STATE_HOME || "";
    if (state.trim() !== state) return null;
    root = (state || "~/.local/state") + "/agent-supervisor";
  }
  root = absolute(root);
  const policy = env.SUPERVISOR_POLICY ? absolute(env.SUPERVISOR_POLICY) : "";
  if (!root || policy === null) return null;
  const text = [policy, SERVER.python, SERVER.version, env.HOME || "", env.XDG_CONFIG_HOME || "",
    sharedPath(env.PATH || "")].join("\0");
  const run = (root === "/" ? "" : root) + "/run";
  return { root, run, name: `hook-${serverKey(text)}.sock` };
}

// client.server_key of `text`: FNV-1a, 64 bits, its first 12 hex digits. Kept for the text it
// was computed from: hashing a byte at a time in BigInt took 0.4-1.3 ms in OpenCode's Bun, twice
// per tool call, for the same environment every time.
let keyOf = { text: null, key: "" };
function serverKey(text) {
  if (keyOf.text === text) return keyOf.key;
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  keyOf = { text, key: hash.toString(16).padStart(16, "0").slice(0, 12) };
  return keyOf.key;
}

// client._trusted: a run/ directory of this user that nobody else may write to, and a socket of
// this user in it (node reads no peer credentials; nobody else can put a socket there).
function trusted(run, name) {
  try {
    const me = process.getuid();
    const dir = lstatSync(run);
    if (!dir.isDirectory() || dir.uid !== me || (dir.mode & 0o022)) return false;
    const sock = lstatSync(`${run}/${name}`);
    return sock.isSocket() && sock.uid === me;
  } catch {
    return false;
  }
}

// One step through the resident server (its raw answer: "<status>\n<stdout>"); FALLBACK when it
// could not be asked, null when it took the step and gave no usable answer in time.
function relay(payload, seconds) {
  return new Promise((resolve) => {
    const at = where();
    if (!at || !trusted(at.run, at.name)) {
      resolve(FALLBACK);
      return;
    }
    let address = `${at.run}/${at.name}`;
    let dir = null;
    if (Buffer.byteLength(address) > 100) { // AF_UNIX paths are short: through the directory
      dir = openSync(at.run, "r");
      address = `/proc/self/fd/${dir}/${at.name}`;
    }
    const started = Date.now();
    const chunks = [];
    let done = false;
    let connected = false;
    const release = () => {
      if (dir !== null) {
        try { closeSync(dir); } catch {}
        dir = null;
      }
    };
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      release();
      sock.destroy();
      resolve(value);
    };
    const sock = createConnection(address);
    const timer = setTimeout(() => finish(null),
      Math.max(seconds - REPLY_MARGIN_S, 0.05) * 1000);
    sock.on("connect", () => {
      connected = true;
      release();
      const session = process.env.SUPERVISOR_RUN_SESSION || "";
      const pid = process.env.SUPERVISOR_RUN_PID || "";
      const body = Buffer.from(JSON.stringify(payload), "utf8");
      const header = {
        target: SERVER.target, cwd: process.cwd(), version: SERVER.version, root: at.root,
        timeout: seconds - (Date.now() - started) / 1000,
        run: session ? [session, /^[0-9]+$/.test(pid) ? Number(pid) : null] : null,
        reply: "raw", length: body.length, // no half-close: Bun's sockets cannot read after it
      };
      sock.write(Buffer.concat([Buffer.from(JSON.stringify(header) + "\n", "utf8"), body]));
    });
    sock.on("data", (chunk) => chunks.push(chunk));
    sock.on("error", () => finish(connected ? null : FALLBACK));
    // the server closes after its answer: "end" (Bun may never say "close" on a socket not
    // ended here), or "close"
    const answered = () => {
      const reply = Buffer.concat(chunks);
      const newline = reply.indexOf(10);
      if (newline < 0) {
        finish(null); // it took the step and died or wedged: the call goes on
        return;
      }
      if (reply.subarray(0, newline).toString() === "version") {
        finish(FALLBACK);
        return;
      }
      finish(parse(reply.subarray(newline + 1).toString("utf8")));
    };
    sock.on("end", answered);
    sock.on("close", answered);
  });
}

// The hook's stdout as an object, or null.
function parse(stdout) {
  try {
    const text = stdout.trim();
    const answer = text ? JSON.parse(text) : null;
    return answer && typeof answer === "object" ? answer : null;
  } catch {
    return null;
  }
}

// One step through the hook client, a process.
function runClient(payload, seconds) {
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
    child.on("close", () => finish(parse(Buffer.concat(chunks).toString("utf8"))));
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

// A hook for an agent that bounds one hook call (LIMIT_S): past that bound it fails the whole
// run, so the hook answers nothing (the agent goes on) just before it; its steps still complete,
// and are recorded, behind it.
function bounded(hook) {
  if (!(LIMIT_S > 0)) return hook;
  return (...args) => {
    let timer = null;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve(undefined), (LIMIT_S - LIMIT_MARGIN_S / 2) * 1000);
    });
    return Promise.race([hook(...args), late]).finally(() => clearTimeout(timer));
  };
}
