// Calls to the public APIs. The console has no API of its own: the admin
// token goes to /admin/v1, an instance's admin session (got from
// /admin/v1 with the admin token) to /graphql, as any client sends them.

const TOKEN_KEY = 'core.console.adminToken';
const SESSIONS_KEY = 'core.console.adminSessions';

export const session = {
  token() { return sessionStorage.getItem(TOKEN_KEY); },
  signIn(token) { sessionStorage.setItem(TOKEN_KEY, token); },
  // signOut forgets every token this tab was given.
  signOut() { sessionStorage.removeItem(TOKEN_KEY); sessionStorage.removeItem(SESSIONS_KEY); },
  // forget drops the admin session of domain (the instance is gone).
  forget(domain) {
    const all = adminSessions();
    delete all[domain];
    sessionStorage.setItem(SESSIONS_KEY, JSON.stringify(all));
  },
};

function adminSessions() {
  try { return JSON.parse(sessionStorage.getItem(SESSIONS_KEY) || '{}') || {}; } catch { return {}; }
}

// RENEW_BEFORE: an admin session this close to its end is replaced
// before the next call.
const RENEW_BEFORE = 3 * 60 * 1000;

// pending are the admin sessions being asked for, by domain: calls made
// at once share one request.
const pending = new Map();

// instanceAuth is how the console reaches an instance's data with the
// admin token alone: the instance's admin session (POST
// /admin/v1/instances/{domain}/session, a 15-minute token that acts as
// the instance token on that instance only), asked for when first needed
// and again when it nears its end. Pass it to graphql as the token.
export function instanceAuth(domain) {
  return async (renew = false) => {
    const s = adminSessions()[domain];
    if (!renew && s && Date.parse(s.expires) - Date.now() > RENEW_BEFORE) return { token: s.token };
    if (!pending.has(domain)) {
      pending.set(domain, admin('POST', `/instances/${encodeURIComponent(domain)}/session`).then((r) => {
        pending.delete(domain);
        if (!r.ok) return { result: r };
        const all = adminSessions();
        all[domain] = { token: r.body.token, expires: r.body.expires };
        sessionStorage.setItem(SESSIONS_KEY, JSON.stringify(all));
        return { token: r.body.token };
      }));
    }
    return pending.get(domain);
  };
}

// A Result is {ok, status, body, errors}: errors are the envelope's items
// ({message, extensions}), empty when ok.
async function call(url, init) {
  let res;
  try {
    res = await fetch(url, { ...init, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
  } catch (e) {
    return { ok: false, status: 0, body: null, errors: [{ message: 'the server cannot be reached (' + e.message + ')', extensions: {} }] };
  }
  let body = null;
  try { body = await res.json(); } catch { /* an empty or non-JSON body */ }
  const errors = (body && Array.isArray(body.errors)) ? body.errors : [];
  if (!res.ok && errors.length === 0) errors.push({ message: `${res.status} ${res.statusText}`, extensions: {} });
  return { ok: res.ok && errors.length === 0, status: res.status, body, errors };
}

// onUnauthenticated is called when the admin token stops working.
let onUnauthenticated = () => {};
export function whenUnauthenticated(f) { onUnauthenticated = f; }

// admin calls /admin/v1 with the given token (the session's by default).
export async function admin(method, path, body, token = session.token()) {
  const headers = { authorization: token || '' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await call(new URL('../admin/v1' + path, location.href), {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (r.status === 401 && token === session.token()) onUnauthenticated(r);
  return r;
}

// graphql runs a document against one instance with a token: a string
// (an account's session, pasted in the playground) or an instanceAuth,
// whose admin session is asked for again once if the server no longer
// takes it. Field errors beside data make ok false; data is still in
// body.data.
export async function graphql(domain, token, query, variables = {}) {
  const send = (t) => call(new URL('../graphql', location.href), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'core-domain': domain, authorization: t || '' },
    body: JSON.stringify({ query, variables }),
  });
  if (typeof token !== 'function') return send(token);
  let a = await token();
  if (a.result) return a.result;
  const r = await send(a.token);
  if (r.status !== 401) return r;
  a = await token(true);
  return a.result || send(a.token);
}

// fileBlob fetches a File's content at path (its url.path; thumb, when
// given, a thumbnail size) with token (an instanceAuth) in the
// authorization header, never in the URL: {ok, blob, message}.
export async function fileBlob(token, path, thumb) {
  const url = new URL('..' + path, location.href);
  if (thumb) url.searchParams.set('thumb', thumb);
  const send = async (t) => {
    try {
      return await fetch(url, { headers: { authorization: t || '' }, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
    } catch (e) {
      return { ok: false, status: 0, statusText: 'the server cannot be reached (' + e.message + ')' };
    }
  };
  let a = await token();
  if (a.result) return { ok: false, message: describe(a.result) };
  let res = await send(a.token);
  if (res.status === 401) {
    a = await token(true);
    if (a.result) return { ok: false, message: describe(a.result) };
    res = await send(a.token);
  }
  if (!res.ok) return { ok: false, message: `${res.status} ${res.statusText}`.trim() };
  return { ok: true, blob: await res.blob() };
}

// tokenOf answers the token string of an instanceAuth (for a URL that
// cannot carry a header); a string is answered as it is.
export async function tokenOf(token) {
  if (typeof token !== 'function') return token;
  const a = await token();
  return a.token || '';
}

// describe words a Result's errors as the server did, with their codes.
export function describe(r) {
  return r.errors.map((e) => {
    const code = e.extensions && e.extensions.code;
    return code ? `${e.message} (${code})` : e.message;
  }).join('; ');
}
