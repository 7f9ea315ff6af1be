// A to-do app written for Hypi, run against Core through graphql-js, the
// reference GraphQL implementation: the client builds the instance's
// schema from introspection and validates every document against it before
// sending it with fetch, as Hypi's example apps send theirs (their header
// prefix hypi read as core). gql/e2e_hypi_test.go starts the server.
//
// Environment: CORE_URL (http://host:port), CORE_DOMAIN, CORE_TOKEN (the
// instance token). It prints "ok" on the last line when every check
// passed and exits 1 with the failure otherwise.

import assert from 'node:assert/strict';
import { env } from './env.mjs';
import { buildClientSchema, getIntrospectionQuery, parse, validate, validateSchema } from 'graphql';

const base = env('CORE_URL');
const domain = env('CORE_DOMAIN');
const instanceToken = env('CORE_TOKEN');

async function send(token, query, variables) {
  const res = await fetch(base + '/graphql', {
    method: 'POST',
    headers: { 'core-domain': domain, authorization: token, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const out = await res.json();
  if (res.status !== 200 || out.errors) {
    throw new Error(`${query.split('{')[0].trim()}: ${res.status} ${JSON.stringify(out)}`);
  }
  return out.data;
}

// ---- the schema, as a standard client builds it

const intro = await send(instanceToken, getIntrospectionQuery());
const schema = buildClientSchema(intro);
const schemaErrors = validateSchema(schema);
assert.deepEqual(schemaErrors.map(String), [], 'the introspected schema is valid GraphQL');

// run validates a document against the introspected schema, then sends it.
const run = (token, query, variables) => {
  const errors = validate(schema, parse(query));
  assert.deepEqual(errors.map(String), [], `document validates: ${query}`);
  return send(token, query, variables);
};

// ---- the app's documents

const SIGN_UP = `mutation signUp($username: String!, $password: String!, $email: String!) {
  createAccount(value: {username: $username, password: {value: $password}, emails: [{value: $email}]}) {
    id
    created
    createdBy
  }
}`;
const LOGIN_BY_EMAIL = `query logIn($email: String!, $password: String!) {
  loginByEmail(email: $email, password: $password) { sessionToken sessionExpires errorCode errorMsg }
}`;
const LOGIN = `query logInByName($username: String!, $password: String!) {
  login(username: $username, password: $password) { sessionToken sessionExpires errorCode errorMsg }
}`;
const SAVE = `mutation save($values: CoreUpsertInputUnion!) {
  upsert(values: $values) { id }
}`;
const TODO_FIELDS = `fragment TodoFields on TodoItem {
  core { id instanceId created updated trashed }
  title
  completed
}`;
const GET_TODO = `query one($id: String!) {
  get(type: TodoItem, id: $id) { ...TodoFields }
}
${TODO_FIELDS}`;
const FIND_TODOS = `query todos($arcql: String!) {
  find(type: TodoItem, arcql: $arcql) {
    edges { node { ... on TodoItem { ...TodoFields } } cursor }
  }
}
${TODO_FIELDS}`;
const REMOVE = `mutation remove($arcql: String!, $clearArrayReferences: Boolean = true) {
  delete(type: TodoItem, arcql: $arcql, clearArrayReferences: $clearArrayReferences)
}`;
const ME = `query me($id: String!) {
  get(type: Account, id: $id) { ... on Account { username emails { value } } }
}`;

// Sign up and log in, by e-mail and by username.
const account = (await run(instanceToken, SIGN_UP, { username: 'grace', password: 'Todo-App-Pass-1', email: 'grace@example.com' })).createAccount;
assert.ok(account.id, 'createAccount answers the new account id');
const byEmail = (await run('', LOGIN_BY_EMAIL, { email: 'grace@example.com', password: 'Todo-App-Pass-1' })).loginByEmail;
assert.ok(byEmail.sessionToken, `loginByEmail: ${JSON.stringify(byEmail)}`);
const byName = (await run('', LOGIN, { username: 'grace', password: 'Todo-App-Pass-1' })).login;
assert.ok(byName.sessionToken, `login: ${JSON.stringify(byName)}`);
const wrong = (await run('', LOGIN_BY_EMAIL, { email: 'grace@example.com', password: 'not it' })).loginByEmail;
assert.equal(wrong.sessionToken, null);
assert.ok(wrong.errorCode, 'a wrong password answers an error code');
const token = byEmail.sessionToken;
assert.deepEqual((await run(token, ME, { id: account.id })).get, { username: 'grace', emails: [{ value: 'grace@example.com' }] });

// Create, read, update, find and delete to-dos as the signed-up account.
const made = (await run(token, SAVE, { values: { TodoList: [{ name: 'home', items: [{ title: 'milk', completed: false }, { title: 'bread', completed: false }] }] } })).upsert;
assert.equal(made.length, 1);
const found = (await run(token, FIND_TODOS, { arcql: "title = 'milk'" })).find.edges;
assert.equal(found.length, 1);
const milk = found[0].node;
assert.equal(milk.title, 'milk');
assert.equal(milk.completed, false);
assert.ok(milk.core.id && milk.core.created && milk.core.instanceId && milk.core.trashed === null, JSON.stringify(milk.core));
assert.ok(found[0].cursor, 'an edge has a cursor');

await run(token, SAVE, { values: { TodoItem: [{ core: { id: milk.core.id }, completed: true }] } });
const got = (await run(token, GET_TODO, { id: milk.core.id })).get;
assert.equal(got.core.id, milk.core.id);
assert.equal(got.title, 'milk', 'an update keeps the fields it does not name');
assert.equal(got.completed, true);

const all = (await run(token, FIND_TODOS, { arcql: '*' })).find.edges;
assert.deepEqual(all.map((e) => e.node.title).sort(), ['bread', 'milk']);

// An interface: a note and a to-do pinned to the list, read through
// Item (find over the interface, a list typed by it, inline fragments).
assert.equal(schema.getType('Item').constructor.name, 'GraphQLInterfaceType');
const note = (await run(token, SAVE, { values: { Note: [{ title: 'call mum', body: 'sunday' }] } })).upsert[0].id;
const list = (await run(token, `{ find(type: TodoList, arcql: "*") { edges { node { ... on TodoList { core { id } } } } } }`)).find.edges[0].node.core.id;
await run(token, SAVE, { values: { TodoList: [{ core: { id: list }, pinned: [{ core: { id: note } }, { core: { id: milk.core.id, impl: 'TodoItem' } }] }] } });
const PINNED = `query pinned($id: String!) {
  get(type: TodoList, id: $id) { ... on TodoList { pinned { __typename core { id impl } title ... on Note { body } } } }
}`;
assert.deepEqual((await run(token, PINNED, { id: list })).get.pinned, [
  { __typename: 'Note', core: { id: note, impl: 'Note' }, title: 'call mum', body: 'sunday' },
  { __typename: 'TodoItem', core: { id: milk.core.id, impl: 'TodoItem' }, title: 'milk' },
]);
const ITEMS = `query items($arcql: String!) { find(type: Item, arcql: $arcql) { edges { node { ... on Item { title } } } } }`;
assert.deepEqual((await run(token, ITEMS, { arcql: "title = 'call mum' OR title = 'milk' SORT title" })).find.edges.map((e) => e.node.title), ['call mum', 'milk']);

// The list holds both items: the defaulted clearArrayReferences lets the
// delete go through and takes the item out of the list.
const deleted = (await run(token, REMOVE, { arcql: `core.id = '${milk.core.id}'` })).delete;
assert.equal(deleted, 1);
assert.equal((await run(token, GET_TODO, { id: milk.core.id })).get, null);
assert.deepEqual((await run(token, FIND_TODOS, { arcql: '*' })).find.edges.map((e) => e.node.title), ['bread']);

console.log('ok');
