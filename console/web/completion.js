// Schema-aware completion for a GraphQL document, from introspection: no
// parser, a scan of the text before the caret that follows the selection-set
// nesting from the root type. It suggests a type's fields inside a
// selection set, a field's arguments inside its parentheses (an enum
// argument's values after its colon), type names after `on`, and the
// operation keywords at the top level. Pure: text in, suggestions out.

// INTROSPECT asks for what completion and the docs pane show.
export const INTROSPECT = `query CoreConsoleIntrospection {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { kind name description
      fields { name description args { name description defaultValue type { ...T } } type { ...T } }
      inputFields { name description defaultValue type { ...T } }
      enumValues { name description }
      possibleTypes { name } }
  }
}
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }`;

// model indexes an introspection answer: {types: Map, roots: {query,
// mutation, subscription}}.
export function model(data) {
  const s = data.__schema;
  return {
    types: new Map(s.types.map((t) => [t.name, t])),
    roots: {
      query: s.queryType && s.queryType.name,
      mutation: s.mutationType && s.mutationType.name,
      subscription: s.subscriptionType && s.subscriptionType.name,
    },
  };
}

// named is a type reference's named type.
export function named(t) {
  while (t && t.ofType) t = t.ofType;
  return t && t.name;
}

// typeString writes a type reference as GraphQL does: [Product!]!.
export function typeString(t) {
  if (!t) return '';
  if (t.kind === 'NON_NULL') return typeString(t.ofType) + '!';
  if (t.kind === 'LIST') return '[' + typeString(t.ofType) + ']';
  return t.name;
}

const TOKEN = /#[^\n]*|"""[\s\S]*?(?:"""|$)|"(?:[^"\\\n]|\\.)*"?|\.\.\.|[_A-Za-z][_0-9A-Za-z]*|-?\d[\d.eE+-]*|[{}()[\]:,=@$!|&]/g;
const WORD = /[_A-Za-z][_0-9A-Za-z]*$/;

// scan follows the document up to the caret: the selection sets open
// (their types), the parentheses open, and where in an argument list the
// caret is.
function scan(schema, text) {
  const stack = []; // type names of the open selection sets
  let op = 'query';
  let prev = ''; // the previous token
  let field = null; // the last field named in the innermost selection set
  let onType = null; // a type condition waiting for its {
  let paren = 0; // parentheses open
  let args = null; // {type, field, used: Set, arg, expectValue} inside a field's arguments
  let value = 0; // [ and { open inside an argument value
  for (const m of text.matchAll(TOKEN)) {
    const t = m[0];
    if (t[0] === '#') continue;
    const isName = /^[_A-Za-z]/.test(t);
    if (paren > 0) {
      if (t === '(') paren += 1;
      else if (t === ')') { paren -= 1; if (paren === 0) args = null; }
      else if (args) {
        if (t === '[' || t === '{') value += 1;
        else if (t === ']' || t === '}') { value -= 1; if (value === 0) args.expectValue = false; }
        else if (value === 0) {
          if (t === ':') args.expectValue = true;
          else if (isName && !args.expectValue && prev !== '$') { args.arg = t; args.used.add(t); }
          else if (args.expectValue && t !== '$' && t !== ',') args.expectValue = false;
        }
      }
      prev = t;
      continue;
    }
    if (t === '(') {
      paren = 1;
      value = 0;
      args = (stack.length && field && prev !== '@' && prev === field.name)
        ? { type: stack[stack.length - 1], field: field.name, used: new Set(), arg: null, expectValue: false } : null;
    } else if (t === '{') {
      let type = null;
      if (onType) type = onType;
      else if (stack.length === 0) type = schema.roots[op] || null;
      else if (field) type = fieldType(schema, stack[stack.length - 1], field.name);
      stack.push(type);
      onType = null;
      field = null;
    } else if (t === '}') {
      stack.pop();
      field = null;
    } else if (isName) {
      if (prev === 'on') onType = t;
      else if (prev === '@' || prev === '$') { /* a directive or a variable */ } else if (stack.length === 0) {
        if (t === 'query' || t === 'mutation' || t === 'subscription') op = t;
      } else if (t !== 'on' || prev !== '...') field = { name: t };
    } else if (t === ':' && field && stack.length) {
      field = null; // that name was an alias: the field follows
    }
    prev = t;
  }
  return { stack, prev, paren, args, value };
}

function fieldType(schema, typeName, name) {
  const t = schema.types.get(typeName);
  const f = t && (t.fields || []).find((x) => x.name === name);
  return f ? named(f.type) : null;
}

// complete answers {from, to, items: [{label, detail, description}]} for
// the caret at pos: from..to is the word the chosen label replaces.
export function complete(schema, text, pos) {
  const before = text.slice(0, pos);
  const word = (before.match(WORD) || [''])[0];
  const from = pos - word.length;
  const after = (text.slice(pos).match(/^[_0-9A-Za-z]*/) || [''])[0];
  const { stack, prev, paren, args, value } = scan(schema, before.slice(0, from));
  let items = [];
  if (prev === '@' || prev === '$' || prev === '...') items = [];
  else if (prev === 'on') items = typeConditions(schema, stack[stack.length - 1]);
  else if (paren > 0) {
    if (args && value === 0) items = args.expectValue ? argValues(schema, args) : argNames(schema, args);
  } else if (stack.length === 0) {
    items = ['query', 'mutation', 'subscription', 'fragment'].map((k) => ({ label: k, detail: 'keyword' }));
  } else items = fields(schema, stack[stack.length - 1]);
  const w = word.toLowerCase();
  const starts = items.filter((i) => i.label.toLowerCase().startsWith(w));
  const has = w ? items.filter((i) => !i.label.toLowerCase().startsWith(w) && i.label.toLowerCase().includes(w)) : [];
  return { from, to: pos + after.length, word, items: [...starts, ...has] };
}

function fields(schema, typeName) {
  const t = schema.types.get(typeName);
  if (!t) return [];
  const out = (t.fields || []).map((f) => ({
    label: f.name,
    detail: (f.args && f.args.length ? '(…) ' : '') + typeString(f.type),
    description: f.description,
  }));
  out.push({ label: '__typename', detail: 'String!', description: 'The name of the object type.' });
  return out;
}

function argNames(schema, args) {
  const t = schema.types.get(args.type);
  const f = t && (t.fields || []).find((x) => x.name === args.field);
  return ((f && f.args) || []).filter((a) => !args.used.has(a.name))
    .map((a) => ({ label: a.name, detail: typeString(a.type), description: a.description }));
}

function argValues(schema, args) {
  const t = schema.types.get(args.type);
  const f = t && (t.fields || []).find((x) => x.name === args.field);
  const a = f && (f.args || []).find((x) => x.name === args.arg);
  const vt = a && schema.types.get(named(a.type));
  if (vt && vt.kind === 'ENUM') return (vt.enumValues || []).map((v) => ({ label: v.name, detail: vt.name, description: v.description }));
  if (vt && vt.name === 'Boolean') return [{ label: 'true', detail: 'Boolean' }, { label: 'false', detail: 'Boolean' }];
  return [];
}

// typeConditions are the types a fragment on the current type may name:
// an abstract type's possible types, else every object, interface and union.
function typeConditions(schema, typeName) {
  const t = schema.types.get(typeName);
  const names = t && t.possibleTypes && t.possibleTypes.length ? t.possibleTypes.map((p) => p.name)
    : [...schema.types.values()].filter((x) => ['OBJECT', 'INTERFACE', 'UNION'].includes(x.kind) && !x.name.startsWith('__')).map((x) => x.name);
  return names.sort().map((n) => ({ label: n, detail: schema.types.get(n) ? schema.types.get(n).kind.toLowerCase() : '' }));
}
