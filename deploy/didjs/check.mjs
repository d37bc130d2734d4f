// Resolves svc objects' DIDs with the did:web resolver of the DIF (npm did-resolver and
// web-did-resolver) as any verifier outside svc would, through a TLS front on loopback (did:web
// resolves over HTTPS only): the document's keys are the object's jwks.json keys, a signature made
// with a key before its rotation still verifies with the document resolved after it, and a
// private object does not resolve. Run by `make test-did-js`, which starts the all-in-one and
// installs the pinned packages.
import { Resolver } from 'did-resolver';
import { getResolver } from 'web-did-resolver';
import { CompactSign, compactVerify, exportJWK, generateKeyPair, importJWK } from 'jose';
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';

const upstream = process.env.UPSTREAM;
const tlsPort = Number(process.env.TLS_PORT);
const base = `https://127.0.0.1:${tlsPort}`;

function fail(msg) {
  console.error('FAIL:', msg);
  process.exit(1);
}

// The TLS front: every request passed on to the all-in-one as it came.
const front = createServer({ cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) }, async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const up = await fetch(upstream + req.url, {
    method: req.method,
    headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection')),
    body: chunks.length ? Buffer.concat(chunks) : undefined,
  });
  res.writeHead(up.status, Object.fromEntries(up.headers));
  res.end(Buffer.from(await up.arrayBuffer()));
});
await new Promise((ok) => front.listen(tlsPort, '127.0.0.1', ok));

async function call(method, path, key, body) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, text };
}

// registerKey makes a new Ed25519 key pair here and registers its public half as the object's
// active signing key; it returns the private key and the kid svc gave it.
async function registerKey(hash, apiKey) {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const { kty, crv, x } = await exportJWK(publicKey);
  const r = await call('POST', `/api/objects/${hash}/signing-keys`, apiKey, { jwk: { kty, crv, x } });
  if (r.status !== 201) fail(`register a signing key: ${r.status} ${r.text}`);
  return { privateKey, kid: r.json.kid };
}

const resolver = new Resolver(getResolver());
const created = await call('POST', '/api/objects', '', {});
if (created.status !== 201) fail(`create: ${created.text}`);
const { hash, api_key: apiKey } = created.json;
const did = `did:web:127.0.0.1%3A${tlsPort}:api:objects:${hash}`;

const first = await registerKey(hash, apiKey);
const statement = new TextEncoder().encode(JSON.stringify({ said: 'before the rotation' }));
const jws = await new CompactSign(statement).setProtectedHeader({ alg: 'EdDSA', kid: first.kid }).sign(first.privateKey);
const second = await registerKey(hash, apiKey);

const { didDocument: doc, didResolutionMetadata: meta } = await resolver.resolve(did);
if (!doc) fail(`resolve ${did}: ${JSON.stringify(meta)}`);
const jwks = (await call('GET', `/api/objects/${hash}/jwks.json`)).json;
for (const k of jwks.keys) {
  const vm = doc.verificationMethod.find((m) => m.id === `${did}#${k.kid}`);
  if (!vm || vm.publicKeyJwk.x !== k.x) fail(`key ${k.kid} of jwks.json is not a verification method of the document`);
}
if (JSON.stringify(doc.assertionMethod) !== JSON.stringify([`${did}#${second.kid}`])) {
  fail(`assertionMethod ${JSON.stringify(doc.assertionMethod)}: want only the active key`);
}
console.log(`resolved ${did}: ${doc.verificationMethod.length} keys, the same as jwks.json`);

// A verifier that knows only the DID checks the old signature by its kid.
const vm = doc.verificationMethod.find((m) => m.id === `${did}#${first.kid}`);
await compactVerify(jws, await importJWK(vm.publicKeyJwk, 'EdDSA')).catch((e) => fail(`old signature: ${e.message}`));
console.log('a signature made before the rotation verifies with the resolved document');

const priv = (await call('POST', '/api/objects', '', { visibility: 'private' })).json;
const missing = await resolver.resolve(`did:web:127.0.0.1%3A${tlsPort}:api:objects:${priv.hash}`);
if (missing.didDocument) fail('a private object resolved');
console.log(`a private object does not resolve: ${missing.didResolutionMetadata.error}`);
front.close();
