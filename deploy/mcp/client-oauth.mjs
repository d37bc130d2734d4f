// The TypeScript SDK client connects to /mcp through its own OAuth support, configured with
// nothing but the server URL: its StreamableHTTPClientTransport runs with an OAuthClientProvider
// whose client id is a Client ID Metadata Document this script serves over https on loopback
// (with the certificate of CIMD_CERT/CIMD_KEY, which the all-in-one trusts). A tool that needs a
// key answers 401; the SDK finds the protected-resource metadata from its WWW-Authenticate, the
// authorization server from that, and sends the person to the consent page, which this script
// walks as a person would (the owner pastes the box's key, then allows). The code goes back
// through transport.finishAuth, and the SDK's own token then lists and calls the write tools.
// Usage: CIMD_CERT=… CIMD_KEY=… node client-oauth.mjs http://127.0.0.1:<port>
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.argv[2];
if (!base || !process.env.CIMD_CERT || !process.env.CIMD_KEY) {
  throw new Error("usage: CIMD_CERT=<pem> CIMD_KEY=<pem> node client-oauth.mjs <base-url>");
}
const serverUrl = new URL(base + "/mcp");
const clientName = "svc sdk oauth check";

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}

// The owner's part, outside the MCP client: a box to grant, and a recipient.
async function create(body) {
  const res = await fetch(base + "/api/objects", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  check(res.status === 201, `POST /api/objects: ${res.status}`);
  return res.json();
}
const alice = await create({ initial_llm_txt: "# Alice\n\nConnects through OAuth." });
const bob = await create({ initial_llm_txt: "# Bob" });

// The redirect URI is never visited: redirectToAuthorization reads the consent's answer itself.
const redirectUrl = "http://127.0.0.1:1/callback";
const clientMetadata = {
  client_name: clientName,
  redirect_uris: [redirectUrl],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

// The client's metadata document, on https; its URL is the client id.
let clientMetadataUrl = "";
const cimd = createServer({ cert: readFileSync(process.env.CIMD_CERT), key: readFileSync(process.env.CIMD_KEY) }, (req, res) => {
  if (req.url !== "/oauth/client.json") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ client_id: clientMetadataUrl, ...clientMetadata }));
});
await new Promise((resolve) => cimd.listen(0, "127.0.0.1", resolve));
clientMetadataUrl = `https://127.0.0.1:${cimd.address().port}/oauth/client.json`;

// consent walks the consent page at url as the box's owner: the page names the client, the
// owner pastes the key and sees the box, then allows. It answers the redirect's query.
async function consent(url) {
  const first = await fetch(url, { redirect: "manual" });
  const page = await first.text();
  check(first.status === 200 && page.includes(clientName), `the consent page names the client: ${first.status} ${page.slice(0, 300)}`);
  const field = (html, name) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))[1];
  const form = { request: field(page, "request"), csrf: field(page, "csrf") };
  const post = (fields) => fetch(url.origin + url.pathname, { method: "POST", redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...form, ...fields }) });
  const identified = await post({ action: "identify", key: alice.api_key });
  const shown = await identified.text();
  check(identified.status === 200 && shown.includes(alice.hash), `the consent page shows the box: ${identified.status}`);
  const allowed = await post({ action: "allow" });
  check(allowed.status === 303, `allow redirects back to the client: ${allowed.status} ${await allowed.text()}`);
  const back = new URL(allowed.headers.get("location"));
  check(back.origin + back.pathname === redirectUrl, `the redirect goes to the registered URI: ${back}`);
  return back.searchParams;
}

// The provider keeps everything in memory, as a browser tab of a hosted client would.
const saved = { state: "", code: "" };
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadataUrl() { return clientMetadataUrl; },
  get clientMetadata() { return clientMetadata; },
  state() { return (saved.state = randomBytes(16).toString("base64url")); },
  clientInformation() { return saved.client; },
  saveClientInformation(info) { saved.client = info; },
  tokens() { return saved.tokens; },
  saveTokens(tokens) { saved.tokens = tokens; },
  saveCodeVerifier(v) { saved.verifier = v; },
  codeVerifier() { return saved.verifier; },
  saveDiscoveryState(s) { saved.discovery = s; },
  discoveryState() { return saved.discovery; },
  async redirectToAuthorization(url) {
    saved.authorizationUrl = url;
    const q = await consent(url);
    // RFC 9207 and the request's own state: the answer comes from the issuer discovery found.
    check(q.get("iss") === saved.discovery?.authorizationServerMetadata?.issuer, `iss ${q.get("iss")} is the discovered issuer`);
    check(q.get("state") === saved.state, "the state comes back unchanged");
    saved.code = q.get("code");
  },
};

try {
  // Anonymous: the public tools answer; a tool that needs a key starts the SDK's OAuth flow.
  const anon = new Client({ name: "svc-ts-oauth-check", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  await anon.connect(transport);
  let unauthorized = null;
  try {
    await anon.callTool({ name: "whoami", arguments: {} });
  } catch (e) {
    unauthorized = e;
  }
  check(unauthorized instanceof UnauthorizedError, `whoami without a token ends in the SDK's redirect: ${unauthorized}`);
  check(saved.client?.client_id === clientMetadataUrl, `the SDK used the metadata document as its client id: ${JSON.stringify(saved.client)}`);
  check(saved.discovery?.resourceMetadata?.resource === serverUrl.href, `discovery found the resource: ${JSON.stringify(saved.discovery?.resourceMetadata)}`);
  const asked = saved.authorizationUrl.searchParams;
  check(asked.get("resource") === serverUrl.href && asked.get("code_challenge_method") === "S256", `the authorization request: ${saved.authorizationUrl}`);
  check(saved.code, "the consent returned a code");
  await transport.finishAuth(saved.code);
  check(saved.tokens?.access_token && saved.tokens?.refresh_token, "finishAuth saved the tokens");
  await anon.close();

  // With the SDK's token: the write tools are listed, and a message goes out from the box.
  const client = new Client({ name: "svc-ts-oauth-check", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  const names = (await client.listTools()).tools.map((t) => t.name);
  check(names.includes("send_message") && names.includes("record_decision"), `the grant lists the write tools: ${names}`);
  const who = await client.callTool({ name: "whoami", arguments: {} });
  check(!who.isError && who.structuredContent.hash === alice.hash, `whoami answers the granted box: ${JSON.stringify(who.content)}`);
  const sent = await client.callTool({ name: "send_message", arguments: { to_hash: bob.hash, kind: "question", body: "Hello through OAuth" } });
  check(!sent.isError && sent.structuredContent.from_hash === alice.hash, `send_message from the granted box: ${JSON.stringify(sent.content)}`);
  await client.close();

  // The grant is a sub-key of the box, named after the client.
  const res = await fetch(`${base}/api/objects/${alice.hash}/keys`, { headers: { Authorization: `Bearer ${alice.api_key}` } });
  const { keys } = await res.json();
  check(keys.some((k) => k.label.startsWith(clientName)), `the grant is among the box's keys: ${JSON.stringify(keys)}`);
  console.log("typescript sdk client: OAuth from the server URL alone (401, resource metadata, CIMD client, consent, finishAuth), then tools/list and send_message");
} finally {
  cimd.close();
}
