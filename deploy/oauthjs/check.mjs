// Connects a strict OAuth client nobody here wrote (npm oauth4webapi) to the all-in-one's /mcp at
// SVC_URL: it discovers the authorization server from the protected resource's metadata, runs
// authorization code + PKCE as a client named by its Client ID Metadata Document (served here over
// https on loopback, with the certificate of CIMD_CERT/CIMD_KEY, which the all-in-one trusts),
// walks the consent page with the owner key as a person would, validates the response's iss, and
// calls tools/call send_message through /mcp with the access token; then it rotates the refresh
// token, a revoked grant's token is refused, and a headless client (the box itself) gets a token
// by client_credentials with private_key_jwt signed by the box's own Ed25519 key.
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import * as oauth from "oauth4webapi";

const base = process.env.SVC_URL;
if (!base) throw new Error("set SVC_URL");
const insecure = { [oauth.allowInsecureRequests]: true }; // the all-in-one answers plain http on loopback

async function call(method, path, body, key) {
  const headers = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// The client's metadata document, on https.
let clientId = "";
const cimd = createServer({ cert: readFileSync(process.env.CIMD_CERT), key: readFileSync(process.env.CIMD_KEY) }, (req, res) => {
  if (req.url !== "/oauth/client.json") { res.writeHead(404).end(); return; }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ client_id: clientId, client_name: "oauth4webapi check", redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }));
});
await new Promise((resolve) => cimd.listen(0, "127.0.0.1", resolve));
clientId = `https://127.0.0.1:${cimd.address().port}/oauth/client.json`;
const redirectUri = "http://127.0.0.1:1/callback"; // never visited: the script reads the redirect
try {
  await run();
  console.log("oauth4webapi: code + PKCE with a CIMD client, iss validated, send_message through /mcp, refresh rotated, " +
    "revoked grant refused, client_credentials with private_key_jwt by the box's own key");
} finally {
  cimd.close();
}

async function run() {
  const alice = await call("POST", "/api/objects", { initial_llm_txt: "# OAuth check" });
  const bob = await call("POST", "/api/objects", {});

  // Discovery: the resource names its authorization server, whose metadata says what it does.
  const resource = new URL(base + "/mcp");
  const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
  const issuer = new URL(rs.authorization_servers[0]);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
  if (!as.client_id_metadata_document_supported || !as.authorization_response_iss_parameter_supported ||
      JSON.stringify(as.code_challenge_methods_supported) !== '["S256"]') {
    throw new Error(`authorization server metadata: ${JSON.stringify(as)}`);
  }
  const client = { client_id: clientId };

  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const authorize = new URL(as.authorization_endpoint);
  for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "read write",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state, resource: resource.href })) {
    authorize.searchParams.set(k, v);
  }

  // The person: the consent page names the client; the owner pastes the key, sees the box, allows.
  const first = await fetch(authorize, { redirect: "manual" });
  const page = await first.text();
  if (first.status !== 200 || !page.includes("oauth4webapi check") || !page.includes(`127.0.0.1:${cimd.address().port}`)) {
    throw new Error(`consent page: ${first.status} ${page}`);
  }
  const field = (html, name) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))[1];
  const form = { request: field(page, "request"), csrf: field(page, "csrf") };
  const post = (fields) => fetch(as.authorization_endpoint, { method: "POST", redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ ...form, ...fields }) });
  const second = await post({ action: "identify", key: alice.api_key });
  const shown = await second.text();
  if (second.status !== 200 || !shown.includes(alice.hash)) throw new Error(`identify: ${second.status} ${shown}`);
  const allowed = await post({ action: "allow" });
  if (allowed.status !== 303) throw new Error(`allow: ${allowed.status} ${await allowed.text()}`);

  // The client: iss and state are validated, the code redeemed with the verifier for the resource.
  const params = oauth.validateAuthResponse(as, client, new URL(allowed.headers.get("location")), state);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier,
      { additionalParameters: { resource: resource.href }, ...insecure }));
  if (tokens.token_type !== "bearer" || !tokens.refresh_token) throw new Error(`tokens: ${JSON.stringify(tokens)}`);

  const mcp = async (token, name, args) => {
    const res = await fetch(resource, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json",
      accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }) });
    return { status: res.status, body: await res.text() };
  };
  const sent = await mcp(tokens.access_token, "send_message", { to_hash: bob.hash, kind: "question", body: "Hello from oauth4webapi" });
  const result = sent.status === 200 && JSON.parse(sent.body).result;
  if (!result || result.isError || result.structuredContent.from_hash !== alice.hash) {
    throw new Error(`send_message: ${sent.status} ${sent.body}`);
  }

  // The refresh token rotates; the grant is a sub-key of the box, and deleting it ends the grant.
  const refreshed = await oauth.processRefreshTokenResponse(as, client,
    await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token, insecure));
  if (refreshed.refresh_token === tokens.refresh_token) throw new Error("the refresh token did not rotate");
  const { keys } = await call("GET", `/api/objects/${alice.hash}/keys`, undefined, alice.api_key);
  const grant = keys.find((k) => k.label.startsWith("oauth4webapi check"));
  if (!grant || grant.scopes.join(" ") !== "read write") throw new Error(`the grant is not among the keys: ${JSON.stringify(keys)}`);
  await call("DELETE", `/api/objects/${alice.hash}/keys/${grant.id}`, undefined, alice.api_key);
  const refused = await mcp(refreshed.access_token, "whoami", {});
  if (refused.status !== 401) throw new Error(`a revoked grant's token: ${refused.status} ${refused.body}`);

  // A headless agent: client_credentials with private_key_jwt signed by an Ed25519 key the
  // owner registered as the box's signing key; the client id is the box's hash.
  const { publicKey, privateKey } = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const { x } = await crypto.subtle.exportKey("jwk", publicKey);
  const { kid } = await call("POST", `/api/objects/${alice.hash}/signing-keys`, { jwk: { kty: "OKP", crv: "Ed25519", x } }, alice.api_key);
  const machine = { client_id: alice.hash };
  const headless = await oauth.processClientCredentialsResponse(as, machine,
    await oauth.clientCredentialsGrantRequest(as, machine, oauth.PrivateKeyJwt({ key: privateKey, kid }),
      { scope: "read write", resource: resource.href }, insecure));
  const who = await mcp(headless.access_token, "whoami", {});
  if (who.status !== 200 || JSON.parse(who.body).result.structuredContent.hash !== alice.hash) {
    throw new Error(`whoami with the headless token: ${who.status} ${who.body}`);
  }
}
