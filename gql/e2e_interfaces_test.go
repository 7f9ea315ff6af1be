package gql_test

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// interfacesSDL declares an interface two record types implement, one no
// type implements (as Hypi's example apps declare one), and a type that
// implements none.
const interfacesSDL = `
interface Item {
  core: Core
  name: String!
  price: Float
}

interface Unused {
  title: String!
}

type Product implements Item {
  core: Core
  name: String!
  price: Float
  sku: String @unique
}

type Service implements Item {
  name: String!
  price: Float
  hours: Int
}

type Note {
  name: String
}

type Order {
  item: Item
  items: [Item!]
}
`

// TestInterfaces publishes a schema with interfaces and reads through them
// (on both stores, as every server test here): find(type: Item) answers the
// records of both implementations the ArcQL filter (on the interface's
// fields) matches, in its order, for the instance token and for a session
// (which sees its own records only), and pages forward from a cursor across
// both types; get(type: Item) finds a record of
// either type; inline fragments on the interface and on the concrete types
// select their fields; introspection lists the interface with its possible
// types; a filter naming a field the interface lacks, paging backward or
// by offsets, a cursor with SORT, and subscribe, delete, trash, link and
// deleteScalars of an interface
// are refused with messages saying why, changing nothing.
func TestInterfaces(t *testing.T) {
	t.Parallel()
	c := newApp(t, "shop", "shop.test", interfacesSDL)
	env := c.env
	c.data(upsertDoc, map[string]any{"v": map[string]any{
		"Product": []any{
			map[string]any{"core": map[string]any{"id": "p1"}, "name": "lamp", "price": 30.0, "sku": "L-1"},
			map[string]any{"core": map[string]any{"id": "p2"}, "name": "desk", "price": 120.0, "sku": "D-1"},
		},
		"Service": []any{
			map[string]any{"core": map[string]any{"id": "s1"}, "name": "assembly", "price": 45.0, "hours": 2},
		},
		"Note": []any{map[string]any{"core": map[string]any{"id": "n1"}, "name": "lamp"}},
	}})

	const findItems = `query($q: String!, $first: Int) { find(type: Item, arcql: $q, first: $first) {
	  edges { node { __typename ... on Item { core { id } name price } ... on Product { sku } ... on Service { hours } } }
	  pageInfo { hasNextPage }
	} }`
	got := c.data(findItems, map[string]any{"q": "price > 40 SORT price DESC"})
	want := []any{
		map[string]any{"node": map[string]any{"__typename": "Product", "core": map[string]any{"id": "p2"}, "name": "desk", "price": 120.0, "sku": "D-1"}},
		map[string]any{"node": map[string]any{"__typename": "Service", "core": map[string]any{"id": "s1"}, "name": "assembly", "price": 45.0, "hours": 2.0}},
	}
	if diff := cmp.Diff(want, path(got, "find", "edges")); diff != "" {
		t.Errorf("find(type: Item) over both implementations (-want +got):\n%s", diff)
	}
	got = c.data(findItems, map[string]any{"q": "*", "first": 2})
	var ids []string
	for _, e := range path(got, "find", "edges").([]any) {
		ids = append(ids, path(e, "node", "core", "id").(string))
	}
	if !slices.Equal(ids, []string{"p1", "p2"}) || path(got, "find", "pageInfo", "hasNextPage") != true {
		t.Errorf("the first two items by core.id: %v, hasNextPage %v; want [p1 p2] and true", ids, path(got, "find", "pageInfo", "hasNextPage"))
	}
	const nextItems = `query($after: String!) { find(type: Item, arcql: "price > 0", first: 2, after: $after) {
	  edges { node { ... on Item { core { id } } } }
	  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	} }`
	got = c.data(nextItems, map[string]any{"after": "p1"})
	wantPage := map[string]any{
		"edges":    []any{map[string]any{"node": map[string]any{"core": map[string]any{"id": "p2"}}}, map[string]any{"node": map[string]any{"core": map[string]any{"id": "s1"}}}},
		"pageInfo": map[string]any{"hasNextPage": false, "hasPreviousPage": true, "startCursor": "p2", "endCursor": "LAST"},
	}
	if diff := cmp.Diff(wantPage, path(got, "find")); diff != "" {
		t.Errorf("the items after p1, across both types (-want +got):\n%s", diff)
	}

	const getItem = `query($id: String!) { get(type: Item, id: $id) { __typename ... on Item { name } } }`
	for id, typ := range map[string]string{"p1": "Product", "s1": "Service"} {
		if g := c.data(getItem, map[string]any{"id": id}); path(g, "get", "__typename") != typ {
			t.Errorf("get(type: Item, id: %s): %s; want a %s", id, dump(g), typ)
		}
	}
	if g := c.data(getItem, map[string]any{"id": "n1"}); path(g, "get") != nil {
		t.Errorf("get(type: Item) found a Note: %s", dump(g))
	}

	// A fragment on the interface inside find of a concrete type.
	got = c.data(`{ find(type: Service, arcql: "*") { edges { node { ... on Item { name } } } } }`, nil)
	if n := path(got, "find", "edges", 0, "node", "name"); n != "assembly" {
		t.Errorf("... on Item inside find(type: Service): %v", n)
	}

	intro := c.data(`{ __type(name: "Item") { kind fields { name } possibleTypes { name } } }`, nil)
	var possible []string
	for _, pt := range path(intro, "__type", "possibleTypes").([]any) {
		possible = append(possible, path(pt, "name").(string))
	}
	slices.Sort(possible)
	if path(intro, "__type", "kind") != "INTERFACE" || !slices.Equal(possible, []string{"Product", "Service"}) {
		t.Errorf("introspection of Item: %s", dump(intro))
	}

	// A session reads its own records only, through the interface too.
	c.data(`mutation { createAccount(value: {username: "ada", password: {value: "ada horse battery"}}) { id } }`, nil)
	login := c.data(`{ login(username: "ada", password: "ada horse battery") { sessionToken } }`, nil)
	ada := &client{t: t, env: env, domain: c.domain, token: path(login, "login", "sessionToken").(string)}
	ada.data(upsertDoc, map[string]any{"v": map[string]any{"Service": []any{map[string]any{"core": map[string]any{"id": "s2"}, "name": "repair", "price": 60.0}}}})
	got = ada.data(findItems, map[string]any{"q": "*"})
	if edges := path(got, "find", "edges").([]any); len(edges) != 1 || path(edges[0], "node", "core", "id") != "s2" {
		t.Errorf("ada's find(type: Item): %s; want her service s2 only", dump(got))
	}
	if g := ada.data(getItem, map[string]any{"id": "p1"}); path(g, "get") != nil {
		t.Errorf("ada's get(type: Item, id: p1) read the instance's product: %s", dump(g))
	}

	for _, bad := range []struct{ doc, want string }{
		{`{ find(type: Item, arcql: "sku = 'L-1'") { edges { cursor } } }`, "sku"},
		{`{ find(type: Item, arcql: "* SORT name", after: "p1") { edges { cursor } } }`, "with SORT answers its first page only"},
		{`{ find(type: Item, arcql: "*", last: 1) { edges { cursor } } }`, "pages forward only"},
		{`{ find(type: Item, arcql: "*", before: "s1") { edges { cursor } } }`, "pages forward only"},
		{`{ find(type: Item, arcql: "*", first: 1) { pageInfo { nextOffsets } } }`, "pages forward by endCursor"},
		{`mutation { delete(type: Item, arcql: "*") }`, "Item is an interface: delete takes a record type"},
		{`mutation { trash(type: Item, arcql: "*") }`, "Item is an interface: trash takes a record type"},
		{`mutation { link(from: Item, to: Product, via: "x", whereFromID: "p1", andToID: "p2") }`, "Item is an interface"},
		{`mutation { deleteScalars(type: Item, field: "name", values: ["lamp"], arcql: "*") }`, "Item is an interface: deleteScalars"},
	} {
		_, msg, code := c.fail(bad.doc, nil)
		if code != "BAD_REQUEST" && code != "BAD_FILTER" || !strings.Contains(msg, bad.want) {
			t.Errorf("%s: %s %q; want a refusal naming %q", bad.doc, code, msg, bad.want)
		}
	}
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	status, body := env.Do(http.MethodGet, "/rest/v1/Item?arcql="+url.QueryEscape("price > 40"), h, nil)
	// REST's paths name record types; an interface is read through GraphQL.
	if code := path(body, "errors", 0, "extensions", "code"); status != 404 || code != "UNKNOWN_TYPE" {
		t.Errorf("GET /rest/v1/Item: %d %s; want 404 UNKNOWN_TYPE", status, dump(body))
	}
	resp, cancel := c.sseRequest(`subscription { subscribe(type: Item) { op } }`, nil, nil)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cancel()
	if !strings.Contains(string(raw), "Item is an interface: subscribe to its implementing types (Product, Service)") {
		t.Errorf("subscribe(type: Item): %d %s; want a refusal naming the implementing types", resp.StatusCode, raw)
	}
	if n := len(path(c.data(findItems, map[string]any{"q": "*", "first": 10}), "find", "edges").([]any)); n != 4 {
		t.Errorf("%d items after the refusals, want 4", n)
	}
}

// TestInterfaceReferences writes and reads fields typed by an interface
// (on both stores, as every server test here): a single and a list
// reference name records of either implementation by core.id (core.impl
// picks the type), also records the same upsert creates; reads resolve
// each to its concrete type (__typename, core.impl, fragments), a list
// filters with ArcQL on the interface's fields, ArcQL on the referring
// type compares the id, REST reads each reference's id and type; a reference to nothing, an attempt to create a
// record through the interface, or an impl that does not implement it is
// refused (creating one by the GraphQL input type ItemInput, which has core
// only) and writes nothing of the batch; deleting a referenced record
// needs clearArrayReferences, which takes it out of the list; link appends
// a record of an implementing type.
func TestInterfaceReferences(t *testing.T) {
	t.Parallel()
	c := newApp(t, "shop", "shop.test", interfacesSDL)
	env := c.env
	c.data(upsertDoc, map[string]any{"v": map[string]any{
		"Product": []any{
			map[string]any{"core": map[string]any{"id": "p1"}, "name": "lamp", "price": 30.0, "sku": "L-1"},
			map[string]any{"core": map[string]any{"id": "p2"}, "name": "desk", "price": 120.0, "sku": "D-1"},
		},
		"Service": []any{map[string]any{"core": map[string]any{"id": "s1"}, "name": "assembly", "price": 45.0, "hours": 2}},
		"Note":    []any{map[string]any{"core": map[string]any{"id": "n1"}, "name": "lamp"}},
	}})
	c.data(upsertDoc, map[string]any{"v": map[string]any{
		"Product": []any{map[string]any{"core": map[string]any{"id": "p3"}, "name": "rug", "price": 80.0}},
		"Order": []any{
			map[string]any{"core": map[string]any{"id": "o1"}, "item": map[string]any{"core": map[string]any{"id": "s1"}},
				"items": []any{map[string]any{"core": map[string]any{"id": "p1"}}, map[string]any{"core": map[string]any{"id": "s1", "impl": "Service"}}}},
			// p3 is written by the same upsert.
			map[string]any{"core": map[string]any{"id": "o2"}, "item": map[string]any{"core": map[string]any{"id": "p3"}}},
		},
	}})
	const readOrder = `query($id: String!) { get(type: Order, id: $id) { ... on Order {
	  item { __typename core { id impl } ... on Item { name } }
	  items { __typename core { id } ... on Product { sku } ... on Service { hours } }
	  dear: items(arcql: "price > 40") { ... on Item { name } }
	} } }`
	got := c.data(readOrder, map[string]any{"id": "o1"})
	want := map[string]any{
		"item": map[string]any{"__typename": "Service", "core": map[string]any{"id": "s1", "impl": "Service"}, "name": "assembly"},
		"items": []any{
			map[string]any{"__typename": "Product", "core": map[string]any{"id": "p1"}, "sku": "L-1"},
			map[string]any{"__typename": "Service", "core": map[string]any{"id": "s1"}, "hours": 2.0},
		},
		"dear": []any{map[string]any{"name": "assembly"}},
	}
	if diff := cmp.Diff(want, path(got, "get")); diff != "" {
		t.Errorf("order o1 through its interface references (-want +got):\n%s", diff)
	}
	if n := path(c.data(readOrder, map[string]any{"id": "o2"}), "get", "item", "name"); n != "rug" {
		t.Errorf("o2.item, a product written by the same upsert: %v", n)
	}
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	status, body := env.Do(http.MethodGet, "/rest/v1/Order/o1", h, nil)
	order := path(body, "data", "find", "edges", 0, "node")
	if status != 200 || path(order, "item", "core", "impl") != "Service" || path(order, "items", 0, "core", "impl") != "Product" {
		t.Errorf("GET /rest/v1/Order/o1: %d %s; want item s1 (a Service) and items [p1 s1]", status, dump(body))
	}
	got = c.data(`{ find(type: Order, arcql: "item = 's1'") { edges { node { ... on Order { core { id } } } } } }`, nil)
	if ids := path(got, "find", "edges"); len(ids.([]any)) != 1 || path(ids, 0, "node", "core", "id") != "o1" {
		t.Errorf("orders whose item is s1: %s", dump(got))
	}

	// A hop needs one target type: through a reference typed by an
	// interface the path names nothing.
	if _, msg, code := c.fail(`{ find(type: Order, arcql: "item.name = 'lamp'") { edges { cursor } } }`, nil); code != "BAD_FILTER" || !strings.Contains(msg, "Order.item.name") {
		t.Errorf("a hop through Order.item: %s %q; want BAD_FILTER naming Order.item.name", code, msg)
	}
	for _, bad := range []struct {
		item      any
		code, msg string
	}{
		{map[string]any{"core": map[string]any{"id": "nope"}}, "NOT_FOUND", "Item nope does not exist"},
		{map[string]any{"core": map[string]any{"id": "n1"}}, "NOT_FOUND", "Item n1 does not exist"},
		{map[string]any{"core": map[string]any{"id": "p1", "impl": "Service"}}, "NOT_FOUND", "Service p1 does not exist"},
		{map[string]any{"core": map[string]any{"id": "p1", "impl": "Note"}}, "BAD_REQUEST", "Note does not implement Item"},
		{map[string]any{"name": "new thing"}, "BAD_REQUEST", `In field "item": In field "name": Unknown field`},
	} {
		vals := map[string]any{"Order": []any{map[string]any{"core": map[string]any{"id": "o9"}, "item": bad.item}}, "Note": []any{map[string]any{"core": map[string]any{"id": "n9"}}}}
		_, msg, code := c.fail(upsertDoc, map[string]any{"v": vals})
		if code != bad.code || !strings.Contains(msg, bad.msg) {
			t.Errorf("item %v: %s %q; want %s naming %q", bad.item, code, msg, bad.code, bad.msg)
		}
	}
	if g := c.data(`{ a: get(type: Order, id: "o9") { __typename } b: get(type: Note, id: "n9") { __typename } }`, nil); g["a"] != nil || g["b"] != nil {
		t.Errorf("a refused batch wrote: %s", dump(g))
	}

	if _, msg, code := c.fail(`mutation { delete(type: Service, arcql: "core.id = 's1'") }`, nil); code != "REFERENCED" || !strings.Contains(msg, "Order.items") {
		t.Errorf("deleting the referenced s1: %s %q; want REFERENCED naming Order.items", code, msg)
	}
	c.data(`mutation { delete(type: Service, arcql: "core.id = 's1'", clearArrayReferences: true) }`, nil)
	c.data(`mutation { link(from: Order, to: Product, via: "items", whereFromID: "o1", andToID: "p2") }`, nil)
	got = c.data(readOrder, map[string]any{"id": "o1"})
	var ids []string
	for _, e := range path(got, "get", "items").([]any) {
		ids = append(ids, path(e, "core", "id").(string))
	}
	if !slices.Equal(ids, []string{"p1", "p2"}) || path(got, "get", "item") != nil {
		t.Errorf("after deleting s1 and linking p2: items %v, item %v; want [p1 p2] and null", ids, path(got, "get", "item"))
	}
	if _, msg, code := c.fail(`mutation { link(from: Order, to: Note, via: "items", whereFromID: "o1", andToID: "n1") }`, nil); code != "BAD_REQUEST" || !strings.Contains(msg, "not a reference to Note") {
		t.Errorf("linking a Note into Order.items: %s %q", code, msg)
	}
	if g := c.data(`{ get(type: Note, id: "n1") { ... on Note { core { impl } } } }`, nil); path(g, "get", "core", "impl") != nil {
		t.Errorf("a Note's core.impl: %v; want null (Note implements nothing)", path(g, "get", "core", "impl"))
	}
}
