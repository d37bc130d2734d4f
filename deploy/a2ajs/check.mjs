// Checks a running svc (BASE) with the official A2A JavaScript SDK, jose and canonicalize, as an
// agent outside svc would: resolve a box's agent card, verify its signature and host binding, send
// a message through the card's interface, and find it in the box's mailbox. Run by
// `make test-a2a-js`, which starts the all-in-one and installs the pinned packages.
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { compactVerify, createRemoteJWKSet, decodeProtectedHeader } from 'jose';
import canonicalize from 'canonicalize';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

const base = process.env.BASE;
if (!base) throw new Error('set BASE to the gateway URL');

async function call(method, path, key, body) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, text };
}

function fail(msg) {
  console.error('FAIL:', msg);
  process.exit(1);
}

// verifyCard checks the card as a verifier that fetched it from cardURL: every signature is a JWS
// over the RFC 8785 canonical card without its signatures (npm canonicalize), whose protected
// header names typ JOSE and a jku on the host the card came from, as are its interface and its
// DID; the keys are those jku serves (jose's remote JWK Set), found by kid.
async function verifyCard(card, cardURL) {
  const { signatures, ...rest } = card;
  if (!signatures || signatures.length === 0) throw new Error('the card has no signature');
  const payload = Buffer.from(canonicalize(rest)).toString('base64url');
  const host = new URL(cardURL).host;
  for (const s of signatures) {
    const header = decodeProtectedHeader(s.protected + '..' + s.signature);
    if (header.typ !== 'JOSE' || !header.jku) throw new Error(`protected header ${JSON.stringify(header)} lacks typ JOSE and jku`);
    if (new URL(header.jku).host !== host) throw new Error(`jku ${header.jku} is not on ${host}, where the card came from`);
    for (const i of card.supportedInterfaces) {
      if (new URL(i.url).host !== host) throw new Error(`interface ${i.url} is not on ${host}`);
    }
    const did = await (await fetch(header.jku.replace(/jwks\.json$/, 'did.json'))).json();
    if (!did.id.startsWith(`did:web:${host.replace(':', '%3A')}:`)) throw new Error(`DID ${did.id} is not on ${host}`);
    await compactVerify(`${s.protected}.${payload}.${s.signature}`, createRemoteJWKSet(new URL(header.jku)));
  }
}

const alice = (await call('POST', '/api/objects', '', {})).json;
const bobCreated = await call('POST', '/api/objects', '', { initial_llm_txt: '# Bob in JS\n\nA box for the JS check.' });
const bob = bobCreated.json;
if (bobCreated.status !== 201) fail(`create: ${bobCreated.text}`);
const cardURL = `${base}/api/objects/${bob.hash}/agent-card.json`;

const cardRes = await fetch(cardURL);
const cardText = await cardRes.text();
const card = JSON.parse(cardText);
await verifyCard(card, cardURL).catch((e) => fail(`card signature: ${e.message}`));
let changedVerified = true;
await verifyCard({ ...card, name: card.name + '!' }, cardURL).catch(() => { changedVerified = false; });
if (changedVerified) fail('a card with its name changed still verifies');
// The same bytes served from another host: the signature is intact, the binding is not.
const copy = createServer((_, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(cardText); });
await new Promise((ok) => copy.listen(0, '127.0.0.1', ok));
const copyURL = `http://127.0.0.1:${copy.address().port}/api/objects/${bob.hash}/agent-card.json`;
let copyVerified = true;
await verifyCard(await (await fetch(copyURL)).json(), copyURL).catch(() => { copyVerified = false; });
copy.close();
if (copyVerified) fail('a copy of the card served from another host passes the host binding check');
console.log('card signature verifies with jose and canonicalize, bound to its host; a changed card and a copy on another host do not');

const client = await new ClientFactory().createFromUrl(cardURL, '');
const result = await client.sendMessage({
  message: {
    messageId: randomUUID(), role: Role.ROLE_USER, contextId: '', taskId: '', extensions: [], referenceTaskIds: [],
    parts: [{ content: { $case: 'text', value: 'Hello from @a2a-js/sdk' } }],
    metadata: { from_hash: alice.hash },
  },
});
const ack = result?.contextId ? result : result?.payload?.value ?? result?.message ?? result;
const threadId = ack.contextId;
if (!threadId) fail(`send answered ${JSON.stringify(result)}`);
const thread = await call('GET', `/api/threads/${threadId}`, bob.api_key);
const first = thread.json?.messages?.[0];
if (thread.status !== 200 || first?.body !== 'Hello from @a2a-js/sdk' || first?.from_hash !== alice.hash) {
  fail(`mailbox holds ${thread.text}`);
}
console.log(`@a2a-js/sdk sent a message into ${bob.hash}'s mailbox (thread ${threadId})`);
