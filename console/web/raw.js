// Requests whose answers the console shows as they came (the playground's
// response, a webhook's "send test"), and the admin upload of a function
// package, whose body is the file's bytes rather than JSON.
import { session } from './api.js';

// send makes a request and keeps its answer whole: {status, statusText,
// headers: [[name, value]], text}, or {status: 0, error} when the server
// cannot be reached.
export async function send(url, init) {
  let res;
  try {
    res = await fetch(url, { ...init, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
  } catch (e) {
    return { status: 0, statusText: '', headers: [], text: '', error: 'the server cannot be reached (' + e.message + ')' };
  }
  return { status: res.status, statusText: res.statusText, headers: [...res.headers], text: await res.text() };
}

// pretty indents a body that is JSON and leaves any other text as it is.
export function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

// upload PUTs a file's bytes to an admin path with the session's token and
// answers like api.js's admin: {ok, status, body, errors}.
export async function upload(path, file) {
  const r = await send(new URL('../admin/v1' + path, location.href), {
    method: 'PUT', headers: { authorization: session.token() || '' }, body: file,
  });
  if (r.error) return { ok: false, status: 0, body: null, errors: [{ message: r.error, extensions: {} }] };
  let body = null;
  try { body = JSON.parse(r.text); } catch { /* not JSON */ }
  const errors = (body && Array.isArray(body.errors)) ? body.errors : [];
  if (r.status >= 400 && errors.length === 0) errors.push({ message: `${r.status} ${r.statusText}`, extensions: {} });
  return { ok: r.status < 400 && errors.length === 0, status: r.status, body, errors };
}
