// Runs the official conformance suite's authorization-server scenarios against the all-in-one's
// issuer, as the person in the loop: the suite's authorization-code-grant prints an authorization
// URL for a browser and waits for the redirect on its own loopback callback. This script is that
// browser: it walks the consent page as the box's owner (pastes the key, allows) and follows the
// redirect to the suite. The suite's client id is a Client ID Metadata Document served here over
// https on loopback (CIMD_CERT/CIMD_KEY, trusted by the all-in-one), listing the suite's callback.
// Usage: CIMD_CERT=… CIMD_KEY=… node authorization.mjs <conformance index.js> <base-url>
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { createServer as createPlain } from "node:net";

const [suite, base] = process.argv.slice(2);
if (!suite || !base || !process.env.CIMD_CERT || !process.env.CIMD_KEY) {
  throw new Error("usage: CIMD_CERT=<pem> CIMD_KEY=<pem> node authorization.mjs <conformance index.js> <base-url>");
}

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

// A free loopback port for the suite's callback server.
const callbackPort = await new Promise((resolve) => {
  const s = createPlain().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const clientName = "MCP conformance suite";
let clientId = "";
const cimd = createServer({ cert: readFileSync(process.env.CIMD_CERT), key: readFileSync(process.env.CIMD_KEY) }, (req, res) => {
  if (req.url !== "/oauth/client.json") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ client_id: clientId, client_name: clientName, redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
    grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none" }));
});
await new Promise((resolve) => cimd.listen(0, "127.0.0.1", resolve));
clientId = `https://127.0.0.1:${cimd.address().port}/oauth/client.json`;

const res = await fetch(base + "/api/objects", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ initial_llm_txt: "# Conformance" }) });
check(res.status === 201, `POST /api/objects: ${res.status}`);
const owner = await res.json();
const metadata = await (await fetch(base + "/.well-known/oauth-authorization-server")).json();

// consent answers the authorization URL the suite printed as a person would, then delivers the
// redirect to the suite's callback.
async function consent(url) {
  const first = await fetch(url, { redirect: "manual" });
  const page = await first.text();
  check(first.status === 200 && page.includes(clientName), `the consent page names the client: ${first.status} ${page.slice(0, 300)}`);
  const field = (html, name) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))[1];
  const form = { request: field(page, "request"), csrf: field(page, "csrf") };
  const post = (fields) => fetch(metadata.authorization_endpoint, { method: "POST", redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...form, ...fields }) });
  const identified = await post({ action: "identify", key: owner.api_key });
  check(identified.status === 200, `identify: ${identified.status}`);
  const allowed = await post({ action: "allow" });
  check(allowed.status === 303, `allow: ${allowed.status} ${await allowed.text()}`);
  const delivered = await fetch(allowed.headers.get("location"));
  check(delivered.ok, `the suite's callback took the redirect: ${delivered.status}`);
}

const run = spawn(process.execPath, [suite, "authorization", "--url", base, "--client-id", clientId,
  "--resource", base + "/mcp", "--port", String(callbackPort)], { stdio: ["ignore", "pipe", "inherit"] });
let pending = "";
let consented = null;
run.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  pending += chunk.toString();
  let nl;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, nl).trim();
    pending = pending.slice(nl + 1);
    if (line.startsWith(metadata.authorization_endpoint + "?") && !consented) {
      consented = consent(new URL(line)).catch((e) => {
        console.error(e);
        run.kill();
        process.exitCode = 1;
      });
    }
  }
});
const code = await new Promise((resolve) => run.on("exit", (c) => resolve(c ?? 1)));
await consented;
cimd.close();
check(consented, "the suite asked for an authorization");
if (code !== 0) process.exitCode = code;
