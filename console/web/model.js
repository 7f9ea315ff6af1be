// What the data browser knows of an instance's schema, from one
// introspection query: the record types, their fields and input fields,
// and ArcQL text built from what the person clicks.

export const BUILTIN = new Set(['AccessRight', 'Account', 'File', 'URL', 'Webhook']);
export const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

export const INTROSPECT = `query CoreConsoleSchema {
  __type(name: "CoreMutationType") { enumValues { name } }
  __schema { types { name kind
    fields { name type { ...T } }
    inputFields { name type { ...T } }
    enumValues { name } } }
}
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`;

// model keeps what the browser needs from an introspection answer.
export function model(data) {
  const types = new Map(data.__schema.types.map((t) => [t.name, t]));
  // Record types only: an interface names the types that implement it,
  // which are listed themselves (records are created as one of them).
  const recordTypes = data.__type.enumValues.map((v) => v.name)
    .filter((n) => NAME.test(n) && (!types.has(n) || types.get(n).kind === 'OBJECT'));
  recordTypes.sort((a, b) => (BUILTIN.has(a) - BUILTIN.has(b)) || a.localeCompare(b));
  return { types, recordTypes };
}

// unwrap gives a type reference's named type and whether it is a list.
export function unwrap(t) {
  let list = false;
  while (t && (t.kind === 'NON_NULL' || t.kind === 'LIST')) { if (t.kind === 'LIST') list = true; t = t.ofType; }
  return { kind: t && t.kind, name: t && t.name, list };
}

// columns are the fields of a record type the console shows: scalars and
// enums as they are (kind: their type's name), references by the
// referenced record's id and label (ref: its type; label: labelField). writable says the type's input
// has the field.
export function columns(s, type) {
  const t = s.types.get(type);
  const input = s.types.get(type + 'Input');
  const writable = new Set(((input && input.inputFields) || []).map((f) => f.name));
  const cols = [];
  for (const f of (t && t.fields) || []) {
    if (f.name === 'core' || !NAME.test(f.name)) continue;
    const u = unwrap(f.type);
    const base = { name: f.name, list: u.list, writable: writable.has(f.name) };
    if (u.kind === 'SCALAR' || u.kind === 'ENUM') cols.push({ ...base, sel: f.name, kind: u.name, enumType: u.kind === 'ENUM' });
    else if (u.kind === 'OBJECT' && hasCore(s, u.name)) {
      const label = labelField(s, u.name);
      cols.push({ ...base, sel: `${f.name} { core { id }${label ? ' ' + label : ''} }`, ref: u.name, label });
    }
  }
  return cols;
}

// LABELS are the fields that name a record, in the order they are looked
// for: a reference shows the first its type has (a plain String), else
// the id.
const LABELS = ['name', 'title', 'username', 'label'];

// labelField answers the field a record of type is labelled by, or ''.
export function labelField(s, type) {
  const t = s.types.get(type);
  const fields = (t && t.fields) || [];
  for (const n of LABELS) {
    const f = fields.find((x) => x.name === n);
    if (f) { const u = unwrap(f.type); if (u.kind === 'SCALAR' && u.name === 'String' && !u.list) return n; }
  }
  return '';
}

// RULE_OPS are the operations of a type's @access rules, in the order shown.
export const RULE_OPS = ['read', 'create', 'update', 'delete'];

// accessRules reads the @access(read:, create:, update:, delete:) rules of
// type from a release's SDL text: {read, create, update, delete} (the rule
// text of each operation the directive names), or null when the type has
// none. It reads only what it needs: the type's header up to its "{",
// skipping comments and descriptions; strings may be "…" (with escapes)
// or """…""" blocks.
export function accessRules(sdl, type) {
  const toks = tokens(sdl);
  for (let i = 0; i + 1 < toks.length; i++) {
    if (toks[i].v !== 'type' || toks[i + 1].v !== type || toks[i].str || toks[i + 1].str) continue;
    if (i > 0 && toks[i - 1].v === 'extend') continue;
    for (let j = i + 2; j < toks.length && toks[j].v !== '{' && toks[j].v !== 'type'; j++) {
      if (toks[j].v !== '@' || !toks[j + 1] || toks[j + 1].v !== 'access' || !toks[j + 2] || toks[j + 2].v !== '(') continue;
      const rules = {};
      for (let k = j + 3; k + 2 < toks.length && toks[k].v !== ')'; k++) {
        if (!toks[k].str && toks[k + 1].v === ':' && toks[k + 2].str) { rules[toks[k].v] = toks[k + 2].v; k += 2; }
      }
      return Object.keys(rules).length ? rules : null;
    }
    return null;
  }
  return null;
}

// tokens splits SDL into names, punctuation and strings ({v, str}),
// dropping comments, commas and white space.
function tokens(sdl) {
  const out = [];
  let i = 0;
  while (i < sdl.length) {
    const c = sdl[i];
    if (c === '#') { while (i < sdl.length && sdl[i] !== '\n') i++; continue; }
    if (/[\s,]/.test(c)) { i++; continue; }
    if (sdl.startsWith('"""', i)) {
      const end = sdl.indexOf('"""', i + 3);
      const stop = end < 0 ? sdl.length : end;
      out.push({ v: sdl.slice(i + 3, stop).trim(), str: true });
      i = stop + 3;
      continue;
    }
    if (c === '"') {
      let v = '';
      i++;
      while (i < sdl.length && sdl[i] !== '"' && sdl[i] !== '\n') {
        if (sdl[i] === '\\' && i + 1 < sdl.length) { const e = sdl[i + 1]; v += e === 'n' ? '\n' : e === 't' ? '\t' : e; i += 2; } else v += sdl[i++];
      }
      i++;
      out.push({ v, str: true });
      continue;
    }
    const m = /^[_A-Za-z][_0-9A-Za-z]*/.exec(sdl.slice(i, i + 256));
    if (m) { out.push({ v: m[0] }); i += m[0].length; continue; }
    out.push({ v: c });
    i++;
  }
  return out;
}

function hasCore(s, name) {
  const t = s.types.get(name);
  return !!(t && t.fields && t.fields.some((f) => f.name === 'core'));
}

// quote writes text as an ArcQL string literal.
export function quote(text) {
  return "'" + String(text).replace(/[\\']/g, '\\$&') + "'";
}

// byID is the ArcQL filter that matches one record.
export function byID(id) { return 'core.id = ' + quote(id); }

// sortClause finds the SORT clause of an ArcQL filter: the keyword
// outside quotes, as a word. It answers the filter before it (trimmed,
// "*" when empty) and the first sort key, if any, as {path, desc}.
export function sortClause(arcql) {
  let quoteChar = '';
  for (let i = 0; i < arcql.length; i++) {
    const c = arcql[i];
    if (quoteChar) {
      if (c === '\\') i++;
      else if (c === quoteChar) quoteChar = '';
      continue;
    }
    if (c === "'" || c === '"') { quoteChar = c; continue; }
    // A filter starts with a comparison, so SORT at 0 is a field's name.
    if (i > 0 && /\s/.test(arcql[i - 1]) && /^SORT(\s|$)/i.test(arcql.slice(i, i + 5))) {
      const keys = arcql.slice(i + 4).trim().split(',')[0].trim().split(/\s+/);
      return {
        filter: arcql.slice(0, i).trim() || '*',
        key: keys[0] ? { path: keys[0], desc: (keys[1] || '').toUpperCase() === 'DESC' } : null,
      };
    }
  }
  return { filter: arcql.trim() || '*', key: null };
}

// withSort replaces a filter's SORT clause by one key.
export function withSort(arcql, path, desc) {
  return `${sortClause(arcql).filter} SORT ${path} ${desc ? 'DESC' : 'ASC'}`;
}
