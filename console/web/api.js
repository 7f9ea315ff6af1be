// Calls to the public APIs. The console has no API of its own: the admin
// token goes to /admin/v1, an instance's token to /graphql, as any client
// sends them.

const TOKEN_KEY = 'core.console.adminToken';
const INSTANCE_KEY = 'core.console.instanceTokens';

export const session = {
  token() { return sessionStorage.getItem(TOKEN_KEY); },
  signIn(token) { sessionStorage.setItem(TOKEN_KEY, token); },
  // signOut forgets every token this tab was given.
  signOut() { sessionStorage.removeItem(TOKEN_KEY); sessionStorage.removeItem(INSTANCE_KEY); },
  instanceToken(domain) { return instanceTokens()[domain] || ''; },
  setInstanceToken(domain, token) {
    const all = instanceTokens();
    if (token) all[domain] = token; else delete all[domain];
    sessionStorage.setItem(INSTANCE_KEY, JSON.stringify(all));
  },
};

function instanceTokens() {
  try { return JSON.parse(sessionStorage.getItem(INSTANCE_KEY) || '{}') || {}; } catch { return {}; }
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

// graphql runs a document against one instance with its token. Field
// errors beside data make ok false; data is still in body.data.
export function graphql(domain, token, query, variables = {}) {
  return call(new URL('../graphql', location.href), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'core-domain': domain, authorization: token || '' },
    body: JSON.stringify({ query, variables }),
  });
}

// describe words a Result's errors as the server did, with their codes.
export function describe(r) {
  return r.errors.map((e) => {
    const code = e.extensions && e.extensions.code;
    return code ? `${e.message} (${code})` : e.message;
  }).join('; ');
}
