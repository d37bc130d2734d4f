// Checks a running svc (BASE) with the official A2A JavaScript SDK and jose, as an agent outside
// svc would: resolve a box's agent card, verify its signature against the box's jwks.json, send
// a message through the card's interface, and find it in the box's mailbox. Run by
// `make test-a2a-js`, which starts the all-in-one and installs the pinned packages.
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { compactVerify, importJWK, decodeProtectedHeader } from 'jose';
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

// canonical is RFC 8785 JCS for JSON values: keys sorted by UTF-16 code units, strings and
// numbers as ECMAScript's JSON.stringify writes them (which is what JCS specifies).
function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

async function verifyCard(card, jwks) {
  const { signatures, ...rest } = card;
  if (!signatures || signatures.length === 0) throw new Error('the card has no signature');
  const payload = Buffer.from(canonical(rest)).toString('base64url');
  for (const s of signatures) {
    const { kid } = decodeProtectedHeader(s.protected + '..' + s.signature);
    const jwk = jwks.keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error(`kid ${kid} is not in jwks.json`);
    await compactVerify(`${s.protected}.${payload}.${s.signature}`, await importJWK(jwk, 'EdDSA'));
  }
}

const alice = (await call('POST', '/api/objects', '', {})).json;
const bobCreated = await call('POST', '/api/objects', '', { initial_llm_txt: '# Bob in JS\n\nA box for the JS check.' });
const bob = bobCreated.json;
if (bobCreated.status !== 201) fail(`create: ${bobCreated.text}`);
const cardURL = `${base}/api/objects/${bob.hash}/agent-card.json`;

const card = (await call('GET', `/api/objects/${bob.hash}/agent-card.json`)).json;
const jwks = (await call('GET', `/api/objects/${bob.hash}/jwks.json`)).json;
await verifyCard(card, jwks).catch((e) => fail(`card signature: ${e.message}`));
let changedVerified = true;
await verifyCard({ ...card, name: card.name + '!' }, jwks).catch(() => { changedVerified = false; });
if (changedVerified) fail('a card with its name changed still verifies');
console.log('card signature verifies with jose; a changed card does not');

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
