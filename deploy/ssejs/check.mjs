// Follows an owner's event stream through the gateway at SVC_URL with the npm eventsource
// package: a message event arrives within 1 s of POST /api/messages' answer; after a disconnect, three
// more messages arrive on reconnection with Last-Event-ID, exactly and in order.
import { EventSource } from "eventsource";

const base = process.env.SVC_URL;
if (!base) throw new Error("set SVC_URL");

async function call(method, path, body, key) {
  const headers = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

function open(hash, key, lastEventId) {
  const es = new EventSource(`${base}/api/objects/${hash}/events?types=message`, {
    fetch: (url, init) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${key}`);
      if (lastEventId) headers.set("last-event-id", lastEventId);
      return fetch(url, { ...init, headers });
    },
  });
  const queue = [];
  let waiting = null;
  es.addEventListener("message", (ev) => {
    queue.push(ev);
    if (waiting) { waiting(); waiting = null; }
  });
  es.addEventListener("error", (ev) => console.error("stream error", ev.message ?? ""));
  const next = (ms) => new Promise((resolve, reject) => {
    const take = () => resolve(queue.shift());
    if (queue.length) return take();
    const timer = setTimeout(() => { waiting = null; reject(new Error(`no message event within ${ms} ms`)); }, ms);
    waiting = () => { clearTimeout(timer); take(); };
  });
  const opened = new Promise((resolve, reject) => {
    es.addEventListener("open", resolve, { once: true });
    setTimeout(() => reject(new Error("stream did not open")), 10000);
  });
  return { es, next, opened, queue };
}

const alice = await call("POST", "/api/objects", {});
const bob = await call("POST", "/api/objects", {});
const send = (body, thread) => call("POST", "/api/messages",
  { from_hash: bob.hash, to_hash: alice.hash, kind: "note", body, ...(thread ? { thread_id: thread } : {}) });

let s = open(alice.hash, alice.api_key);
await s.opened;
const sent = Date.now();
const first = await send("one");
const answered = Date.now();
const ev = await s.next(5000);
const took = Date.now() - answered;
if (JSON.parse(ev.data).data.message_id !== first.id) throw new Error(`first event is not message ${first.id}: ${ev.data}`);
if (took > 1000) throw new Error(`message event arrived ${took} ms after the POST, want within 1 s`);
console.log(`POST /api/messages answered in ${answered - sent} ms, its message event came ${took} ms after the answer (id ${ev.lastEventId})`);
s.es.close();

const want = [];
for (const body of ["two", "three", "four"]) want.push((await send(body, first.thread_id)).id);

s = open(alice.hash, alice.api_key, ev.lastEventId);
const got = [];
for (let i = 0; i < 3; i++) got.push(JSON.parse((await s.next(10000)).data).data.message_id);
await new Promise((r) => setTimeout(r, 500));
s.es.close();
if (JSON.stringify(got) !== JSON.stringify(want) || s.queue.length) {
  throw new Error(`resumed stream carried ${JSON.stringify(got)} (+${s.queue.length} more), want exactly ${JSON.stringify(want)}`);
}
console.log(`resumed with Last-Event-ID: exactly ${got.length} messages, in order`);
