// The agent loop of deploy/e2e's TestMCPAgentLoop through the official TypeScript SDK client:
// create two objects over REST, then through /mcp send, read the thread, record a decision, set
// guidance, rebuild and read decision memory; a read-only sub-key lists no write tool and its
// write call is refused as REST refuses it. The SDK checks every structured result against the
// tool's outputSchema. Usage: node client.mjs http://127.0.0.1:<port>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.argv[2];
if (!base) throw new Error("usage: node client.mjs <base-url>");

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

async function rest(method, path, key, body) {
  const headers = { "Content-Type": "application/json" };
  if (key) headers.Authorization = `Bearer ${key}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function connect(key) {
  const client = new Client({ name: "svc-ts-check", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
    requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  return client;
}

async function ok(client, name, args) {
  const r = await client.callTool({ name, arguments: args ?? {} });
  check(!r.isError, `${name} succeeded: ${JSON.stringify(r.content)}`);
  check(r.structuredContent && typeof r.structuredContent === "object", `${name} has structured content`);
  return r.structuredContent;
}

const alice = (await rest("POST", "/api/objects", null, { initial_llm_txt: "# Alice\n\nBuilds parsers." })).body;
const bob = (await rest("POST", "/api/objects", null, { initial_llm_txt: "# Bob\n\nShips compilers." })).body;
check(alice.api_key && bob.api_key, "objects created");

const a = await connect(alice.api_key);
check((a.getInstructions() ?? "").includes("never quote"), "the instructions carry the guidance rule");
const names = (await a.listTools()).tools.map((t) => t.name);
for (const n of ["whoami", "send_message", "read_thread", "record_decision", "set_private_guidance", "read_decision_memory"]) {
  check(names.includes(n), `the owner key lists ${n}`);
}
check((await ok(a, "whoami")).hash === alice.hash, "whoami answers alice");
const sent = await ok(a, "send_message", { to_hash: bob.hash, kind: "question", body: "Parser first?" });
const retried = await ok(a, "send_message", { to_hash: bob.hash, kind: "question", body: "Parser first?" });
check(sent.id === retried.id, "a retried send stores one message");
const thread = await ok(a, "read_thread", { thread_id: sent.thread_id });
check(thread.messages.length === 1 && thread.messages[0].body === "Parser first?", "read_thread shows the message");
const decision = await ok(a, "record_decision", { thread_id: sent.thread_id, title: "Parser first", body: "Agreed.", confidence: 0.9 });
check(decision.type === "decision", "record_decision makes a decision node");
const guidance = await ok(a, "set_private_guidance", { thread_id: sent.thread_id, body: "Hold the deadline." });
check(guidance.ok === true, "set_private_guidance");
let rebuilt = 0;
for (let i = 0; i < 50 && rebuilt !== 1; i++) {
  rebuilt = (await ok(a, "rebuild_decision_memory")).rebuilt_from_decisions;
  if (rebuilt !== 1) await new Promise((r) => setTimeout(r, 200));
}
check(rebuilt === 1, "the decision reaches decision memory");
check((await ok(a, "read_decision_memory")).memory.includes("Parser first"), "read_decision_memory shows the decision");
check((await ok(a, "read_profile", { hash: bob.hash })).text.includes("Ships compilers."), "read_profile");
await a.close();

const sub = (await rest("POST", `/api/objects/${alice.hash}/keys`, alice.api_key, { label: "reader", scopes: ["read"] })).body;
const r = await connect(sub.key);
const readTools = (await r.listTools()).tools;
check(readTools.length > 0 && readTools.every((t) => t.annotations?.readOnlyHint === true), "a read key lists only read-only tools");
const refused = await r.callTool({ name: "update_profile", arguments: { body: "# Nope" } });
const viaRest = await rest("PUT", `/api/objects/${alice.hash}/llm.txt`, sub.key, { body: "# Nope" });
const err = JSON.parse(refused.content[0].text);
check(refused.isError && err.status === viaRest.status && err.error.code === viaRest.body.error.code,
  `the write is refused as REST refuses it: ${refused.content[0].text} vs ${viaRest.status} ${JSON.stringify(viaRest.body)}`);
await r.close();
console.log("typescript sdk client: the agent loop passed");
