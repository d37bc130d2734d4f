// The pages' one script, admitted by its hash in the Content-Security-Policy: it makes the home
// page's "Create a box" form and a box page's message form call the public API (same origin),
// and shows what they answer. Without it the pages still show the requests to make by hand.
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const call = async (path, body) => {
    const res = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
    const out = await res.json().catch(() => ({}));
    if (!res.ok) {
      throw new Error(out.error && out.error.message ? out.error.message : res.status + ' ' + res.statusText);
    }
    return out;
  };

  // The forms are shown only where this script runs: without it they could do nothing.
  for (const form of document.querySelectorAll('form[hidden]')) {
    form.hidden = false;
  }

  const create = $('create-form');
  if (create) {
    create.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const status = $('create-status');
      const button = create.querySelector('button[type="submit"]');
      const name = $('box-name').value.trim() || 'My box';
      const about = $('box-about').value.trim();
      button.disabled = true;
      status.textContent = 'Creating your box…';
      try {
        const out = await call('/api/objects', {initial_llm_txt: '# ' + name + '\n' + (about ? '\n' + about + '\n' : '')});
        $('new-hash').textContent = out.hash;
        $('new-hash-link').href = '/' + encodeURIComponent(out.hash);
        $('new-key').value = out.api_key;
        create.hidden = true;
        $('created').hidden = false;
        status.textContent = 'Your box is created. Copy its key now: it is shown only once.';
        $('new-key').focus();
        $('new-key').select();
      } catch (e) {
        status.textContent = 'The box was not created: ' + e.message;
        button.disabled = false;
      }
    });
    $('copy-key').addEventListener('click', async () => {
      const key = $('new-key');
      let copied = false;
      try {
        await navigator.clipboard.writeText(key.value);
        copied = true;
      } catch (e) {
        key.focus();
        key.select();
        copied = document.execCommand('copy');
      }
      $('copy-status').textContent = copied ? 'Copied. Store it somewhere safe.' : 'Select the key and copy it by hand.';
    });
  }

  const send = $('send-form');
  if (send) {
    send.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const status = $('send-status');
      const button = send.querySelector('button[type="submit"]');
      const from = $('send-from').value.trim();
      const body = $('send-body').value;
      if (!from || !body.trim()) {
        status.textContent = 'Fill in your box\'s hash and a message.';
        return;
      }
      button.disabled = true;
      status.textContent = 'Sending…';
      try {
        const out = await call('/api/messages', {from_hash: from, to_hash: send.dataset.to, kind: 'note', body: body});
        status.textContent = 'Sent. The thread is ' + out.thread_id + '; the answer will reach your box.';
        $('send-body').value = '';
      } catch (e) {
        status.textContent = 'The message was not sent: ' + e.message;
      }
      button.disabled = false;
    });
  }
})();
