// Verifies requests signed by `svc sign-request` with Cloudflare's web-bot-auth verifier, as a
// site receiving them would: the key comes from the directory the request's Signature-Agent names
// and is picked by its JWK thumbprint (the keyid); the signature verifies; a changed path, a
// changed body (with its digest recomputed) and an expired signature do not; a changed body under
// the signed digest is caught by comparing Content-Digest. Run by `make test-web-bot-auth`.
import { verify, jwkToKeyID, helpers } from 'web-bot-auth';
import { verifierFromJWK } from 'web-bot-auth/crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';

const base = process.env.BASE;
const svc = process.env.SVC;

function fail(msg) {
  console.error('FAIL:', msg);
  process.exit(1);
}

const created = await (await fetch(`${base}/api/objects`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
const keyFile = join(mkdtempSync(join(tmpdir(), 'wba-')), 'key.json');
const env = { ...process.env, SVC_URL: base, SVC_KEY: created.api_key };
const made = JSON.parse(execFileSync(svc, ['keygen', '-out', keyFile, created.hash], { env }).toString());

// sign runs svc sign-request and returns its headers.
function sign(method, url, body, ttl = '1m') {
  const args = ['sign-request', '-key', keyFile, '-X', method, '-ttl', ttl];
  if (body) args.push('-d', body);
  const out = execFileSync(svc, [...args, url], { env }).toString();
  return Object.fromEntries(out.trim().split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
}

// check verifies a request as a receiving site would, with the key of the directory the
// request names; it throws when the request is not validly signed.
async function check(method, url, headers, body) {
  const agent = JSON.parse(headers['Signature-Agent']);
  const directory = await (await fetch(agent)).json();
  const keys = new Map();
  for (const k of directory.keys) keys.set(await jwkToKeyID(k, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE), k);
  if (body !== undefined && headers['Content-Digest']) {
    const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
    if (digest !== headers['Content-Digest']) throw new Error('Content-Digest is not the body\'s');
  }
  const request = new Request(url, { method, headers, body });
  await verify(request, async (data, signature, params) => {
    const jwk = keys.get(params.keyid);
    if (!jwk) throw new Error(`keyid ${params.keyid} is not in ${agent}`);
    return (await verifierFromJWK(jwk))(data, signature, params);
  });
}

const target = 'https://api.example.com/v1/orders';
const body = JSON.stringify({ item: 'book', quantity: 1 });
const headers = sign('POST', target, body);
if (!headers['Signature-Agent'].includes(`/api/objects/${created.hash}/`)) fail(`Signature-Agent ${headers['Signature-Agent']}`);
await check('POST', target, headers, body).catch((e) => fail(`a request signed by svc sign-request: ${e.message}`));
console.log(`web-bot-auth verifies a request signed as ${created.hash} (kid ${made.kid})`);

const refused = async (what, ...args) => {
  let ok = true;
  await check(...args).catch(() => { ok = false; });
  if (ok) fail(`${what} still verifies`);
  console.log(`refused: ${what}`);
};
await refused('a changed path', 'POST', 'https://api.example.com/v1/refunds', headers, body);
await refused('a changed host', 'POST', 'https://other.example.com/v1/orders', headers, body);
const other = JSON.stringify({ item: 'book', quantity: 100 });
await refused('a changed body under the signed digest', 'POST', target, headers, other);
await refused('a changed body with its digest recomputed', 'POST', target,
  { ...headers, 'Content-Digest': `sha-256=:${createHash('sha256').update(other).digest('base64')}:` }, other);
const short = sign('GET', target, '', '1s');
await check('GET', target, short).catch((e) => fail(`a fresh GET: ${e.message}`));
await new Promise((ok) => setTimeout(ok, 2100));
await refused('a replay after expires', 'GET', target, short);
