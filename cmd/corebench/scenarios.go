package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// scenario is one row of the table: a request, the class that sets its
// request count, and the check its sanity answer must pass before any
// load. The REST rows are those of ../shared/bench/scenarios-core.tsv.
type scenario struct {
	name  string
	class class
	desc  string
	req   *request
	check func(c checkCtx) error
}

// checkCtx is what a check sees: the sanity answer, the id that request
// used, and a way to read a record back.
type checkCtx struct {
	a  answer
	id string
	// get sends GET path with the instance's headers.
	get func(path string) (answer, error)
}

// instance is what the scenarios address: the server, the bench instance
// and its data.
type instance struct {
	host    string // host:port, the Host header
	domain  string
	token   string // the instance token
	grantee string // a session of an account that reads the books through grants
	webhook string // name of the Webhook record
	data    dataset
}

// scenario names, in the order they run.
const (
	scGetBook       = "a_get_book"
	scList          = "b1_list_books_price_gt_50"
	scListSorted    = "b2_list_books_price_gt_50_sort_desc"
	scGetAuthor     = "c_get_author_expand_booklist"
	scCreate        = "d_create_book"
	scUpdate        = "e_update_book"
	scLogin         = "f_login_password"
	scGraphQLList   = "g_graphql_list_price_gt_50"
	scWebhook       = "h_webhook_function"
	scGranteeList   = "i_list_books_as_grantee"
	scAggregate     = "j_aggregate_price_gt_50"
	scGroupBy       = "k_group_by_authorid"
	scFloor         = "z_floor_healthz"
	bookSelection   = `core { id created updated trashed createdBy impl app release instance publisherRealm publisherApp publisherRelease instanceId } title authorid price`
	pageInfoFields  = `pageInfo { hasPreviousPage hasNextPage startCursor endCursor pageLimit previousOffsets nextOffsets }`
	webhookBodyTmpl = `{"event":"bench","n":{n}}`
)

// graphqlList is the b1 list as a GraphQL document, selecting what the
// REST rewrite selects for it (every field, core with all its metadata,
// the cursor and pageInfo), so both do the same work.
var graphqlList = `{ find(type: Book, arcql: "price > 50", first: 25) { edges { cursor node { ... on Book { ` +
	bookSelection + ` } } } ` + pageInfoFields + ` } }`

// The aggregation documents, and the SQLite queries they are compared
// with (sqlite.go).
const (
	aggregateDoc = `{ aggregate { book(where: "price > 50") { price { avg sum } core { count } } } }`
	groupByDoc   = `{ aggregate { bookWith(groupBy: [{field: authorid}], first: 10000) { price { avg sum } core { count } groupValues { value } } } }`
)

// scenarios returns every scenario against in, in the order they run:
// the aggregations run before the writes, on the rows as seeded (the
// rows SQLite is given).
func scenarios(in instance) []*scenario {
	books, authors := in.data.bookIDs(), in.data.authorIDs()
	crud := [][2]string{{"core-domain", in.domain}, {"authorization", in.token}}
	domainOnly := [][2]string{{"core-domain", in.domain}}
	get := func(path string, ids []string) *request {
		return newRequest(in.host, "GET", mustTemplate(path), nil, ids, crud)
	}
	send := func(method, path, body string, ids []string, headers [][2]string) *request {
		return newRequest(in.host, method, mustTemplate(path), mustTemplate(body), ids, headers)
	}
	gqlBody, err := json.Marshal(map[string]any{"query": graphqlList})
	if err != nil {
		panic(err) // a constant string always encodes
	}
	over50 := in.data.topPrices(25)
	gqlPost := func(doc string) *request {
		b, err := json.Marshal(map[string]any{"query": doc})
		if err != nil {
			panic(err) // a constant string always encodes
		}
		return send("POST", "/graphql", string(b), nil, crud)
	}
	return []*scenario{
		{name: scGetBook, class: classRead, desc: "GET one book by id (random id)",
			req: get("/rest/v1/Book/{id}", books), check: in.checkBook},
		{name: scList, class: classRead, desc: "list `price > 50`, first 25",
			req:   get("/rest/v1/Book?arcql=price%20%3E%2050&first=25", nil),
			check: func(c checkCtx) error { return checkOver50(c.a, len(over50), nil) }},
		{name: scListSorted, class: classRead, desc: "same, sorted by price descending (indexed)",
			req:   get("/rest/v1/Book?arcql=price%20%3E%2050%20SORT%20price%20DESC&first=25", nil),
			check: func(c checkCtx) error { return checkOver50(c.a, len(over50), over50) }},
		{name: scGetAuthor, class: classRead, desc: "GET one author with its booklist expanded",
			req: get("/rest/v1/Author/{id}", authors), check: in.checkAuthor},
		{name: scAggregate, class: classAggregate, desc: "aggregate `price > 50`: avg and sum of price, count (GraphQL)",
			req: gqlPost(aggregateDoc), check: in.checkAggregate},
		{name: scGroupBy, class: classAggregate, desc: "group by authorid (one group per author): avg and sum of price, count (GraphQL)",
			req: gqlPost(groupByDoc), check: in.checkGroupBy},
		{name: scCreate, class: classWrite, desc: "create a book (POST /rest/v1)",
			req:   send("POST", "/rest/v1", `{"values":{"Book":[{"title":"bench book {n}","authorid":{r:1000},"price":{r:100}}]}}`, nil, crud),
			check: checkCreated},
		{name: scUpdate, class: classWrite, desc: "update a book's price (PUT /rest/v1, core.id + price)",
			req:   send("PUT", "/rest/v1", `{"values":{"Book":[{"core":{"id":"{id}"},"price":{r:100}}]}}`, books, crud),
			check: in.checkUpdated},
		{name: scLogin, class: classLogin, desc: "password login (POST /rest/v1/login, Argon2id)",
			req:   send("POST", "/rest/v1/login", `{"username":"`+benchUser+`","password":"`+benchPassword+`"}`, nil, domainOnly),
			check: checkLogin},
		{name: scGraphQLList, class: classRead, desc: "list `price > 50`, first 25, through /graphql",
			req:   send("POST", "/graphql", string(gqlBody), nil, crud),
			check: func(c checkCtx) error { return checkOver50(c.a, len(over50), nil) }},
		{name: scWebhook, class: classWrite, desc: "webhook calling a small JavaScript function",
			req:   send("POST", "/webhook/"+in.domain+"/"+in.webhook, webhookBodyTmpl, nil, nil),
			check: checkWebhook},
		{name: scFloor, class: classRead, desc: "GET /healthz: the server's floor (routing, middleware, request log, JSON answer)",
			req: newRequest(in.host, "GET", mustTemplate("/healthz"), nil, nil, nil), check: checkHealthz},
		{name: scGranteeList, class: classRead, desc: "list `price > 50`, first 25, as an account granted the books (1,001 grants)",
			req: newRequest(in.host, "GET", mustTemplate("/rest/v1/Book?arcql=price%20%3E%2050&first=25"), nil, nil,
				[][2]string{{"core-domain", in.domain}, {"authorization", in.grantee}}),
			check: func(c checkCtx) error { return checkOver50(c.a, len(over50), nil) }},
	}
}

// scenarioNames lists the names, for flags and messages.
func scenarioNames() []string {
	return []string{scGetBook, scList, scListSorted, scGetAuthor, scAggregate, scGroupBy, scCreate, scUpdate, scLogin, scGraphQLList, scWebhook, scFloor, scGranteeList}
}

// ok2xx fails a non-2xx answer or one carrying GraphQL errors, and
// returns the decoded body.
func ok2xx(a answer) (any, error) {
	if a.status < 200 || a.status > 299 {
		return nil, fmt.Errorf("HTTP %d, want 2xx: %s", a.status, a.excerpt())
	}
	v, err := a.json()
	if err != nil {
		return nil, fmt.Errorf("HTTP %d with a body that is not JSON (%v): %s", a.status, err, a.excerpt())
	}
	if errs, _ := dig(v, "errors").([]any); len(errs) > 0 {
		return nil, fmt.Errorf("HTTP %d with errors: %s", a.status, a.excerpt())
	}
	return v, nil
}

// index returns j of "b<j>" or k of "a<k>".
func index(id string) (int, error) {
	if len(id) < 2 {
		return 0, fmt.Errorf("id %q is not one of the data set's", id)
	}
	return strconv.Atoi(id[1:])
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.005 }

// found returns the first node of a 2xx find answer
// (data.find.edges[0].node, nil when there is none) and the data set's
// index of the record the request named.
func (c checkCtx) found() (any, int, error) {
	v, err := ok2xx(c.a)
	if err != nil {
		return nil, 0, err
	}
	i, err := index(c.id)
	if err != nil {
		return nil, 0, err
	}
	return dig(v, "data", "find", "edges", 0, "node"), i, nil
}

// checkBook: the book the id names, as seeded.
func (in instance) checkBook(c checkCtx) error {
	first, j, err := c.found()
	if err != nil {
		return err
	}
	want := in.data.book(j)
	node, _ := first.(map[string]any)
	price, _ := node["price"].(float64)
	authorid, _ := node["authorid"].(float64)
	if node == nil || node["title"] != want.Title || int(authorid) != want.AuthorID || !near(price, want.Price) {
		return fmt.Errorf("want book %s {title %q, authorid %d, price %.2f} at data.find.edges[0].node, got: %s",
			c.id, want.Title, want.AuthorID, want.Price, c.a.excerpt())
	}
	return nil
}

// prices returns the prices of a 2xx find answer's nodes.
func prices(a answer) ([]float64, error) {
	v, err := ok2xx(a)
	if err != nil {
		return nil, err
	}
	edges, ok := dig(v, "data", "find", "edges").([]any)
	if !ok {
		return nil, fmt.Errorf("no data.find.edges: %s", a.excerpt())
	}
	var ps []float64
	for i := range edges {
		p, ok := dig(edges, i, "node", "price").(float64)
		if !ok {
			return nil, fmt.Errorf("edge %d has no numeric node.price: %s", i, a.excerpt())
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// checkOver50: n books, all priced above 50; when want is set, exactly
// those prices in that order.
func checkOver50(a answer, n int, want []float64) error {
	ps, err := prices(a)
	if err != nil {
		return err
	}
	if len(ps) != n {
		return fmt.Errorf("%d books, want %d: %s", len(ps), n, a.excerpt())
	}
	for _, p := range ps {
		if p <= 50 {
			return fmt.Errorf("a book priced %.2f, want all > 50: %s", p, a.excerpt())
		}
	}
	if want != nil && !slices.EqualFunc(ps, want, near) {
		return fmt.Errorf("prices %v, want the highest ones in descending order %v", ps, want)
	}
	return nil
}

// checkAuthor: the author with its booklist's books embedded, in order.
func (in instance) checkAuthor(c checkCtx) error {
	node, k, err := c.found()
	if err != nil {
		return err
	}
	want := in.data.author(k)
	if dig(node, "name") != want.Name {
		return fmt.Errorf("want author %s (name %q) at data.find.edges[0].node, got: %s", c.id, want.Name, c.a.excerpt())
	}
	list, _ := dig(node, "booklist").([]any)
	if len(list) != len(want.Booklist) {
		return fmt.Errorf("booklist has %d books, want %d: %s", len(list), len(want.Booklist), c.a.excerpt())
	}
	for i, r := range want.Booklist {
		j, _ := index(r.Core.ID)
		if dig(list, i, "core", "id") != r.Core.ID || dig(list, i, "title") != in.data.book(j).Title {
			return fmt.Errorf("booklist[%d] is not book %s with its title embedded: %s", i, r.Core.ID, c.a.excerpt())
		}
	}
	return nil
}

// checkAggregate: the count, sum and average of the prices above 50, as
// seeded.
func (in instance) checkAggregate(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	n, sum := 0, 0.0
	for j := 1; j <= in.data.books; j++ {
		if p := bookPrice(j); p > 50 {
			n, sum = n+1, sum+p
		}
	}
	got := dig(v, "data", "aggregate", "book")
	count, _ := dig(got, "core", "count").(float64)
	gotSum, _ := dig(got, "price", "sum").(float64)
	avg, _ := dig(got, "price", "avg").(float64)
	if int(count) != n || !near(gotSum, sum) || (n > 0 && !near(avg, sum/float64(n))) {
		return fmt.Errorf("want count %d, sum %.2f at data.aggregate.book: %s", n, sum, c.a.excerpt())
	}
	return nil
}

// checkGroupBy: one group per author, in authorid order, each with its
// books' count and price sum as seeded.
func (in instance) checkGroupBy(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	groups, _ := dig(v, "data", "aggregate", "bookWith").([]any)
	if len(groups) != in.data.authors {
		return fmt.Errorf("%d groups, want %d (one per author): %s", len(groups), in.data.authors, c.a.excerpt())
	}
	counts := make([]int, in.data.authors+1)
	sums := make([]float64, in.data.authors+1)
	for j := 1; j <= in.data.books; j++ {
		b := in.data.book(j)
		counts[b.AuthorID]++
		sums[b.AuthorID] += b.Price
	}
	for i, g := range groups {
		k := i + 1
		count, _ := dig(g, "core", "count").(float64)
		sum, _ := dig(g, "price", "sum").(float64)
		if dig(g, "groupValues", 0, "value") != strconv.Itoa(k) || int(count) != counts[k] || !near(sum, sums[k]) {
			return fmt.Errorf("group %d: want authorid %d with %d books summing %.2f, got %v", i, k, counts[k], sums[k], g)
		}
	}
	return nil
}

// checkHealthz: {"status": "ok"}.
func checkHealthz(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	if dig(v, "status") != "ok" {
		return fmt.Errorf(`want {"status":"ok"}: %s`, c.a.excerpt())
	}
	return nil
}

// checkCreated: an upsert answering the new record's id.
func checkCreated(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	if id, _ := dig(v, "data", "upsert", 0, "id").(string); id == "" {
		return fmt.Errorf("no data.upsert[0].id: %s", c.a.excerpt())
	}
	return nil
}

// checkUpdated: the upsert names the book, and the book kept its title
// (a partial update, like PocketBase's PATCH) with the new price.
func (in instance) checkUpdated(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	if id, _ := dig(v, "data", "upsert", 0, "id").(string); id != c.id {
		return fmt.Errorf("data.upsert[0].id is %q, want %q: %s", id, c.id, c.a.excerpt())
	}
	j, err := index(c.id)
	if err != nil {
		return err
	}
	after, err := c.get("/rest/v1/Book/" + c.id)
	if err != nil {
		return fmt.Errorf("reading book %s back: %w", c.id, err)
	}
	rv, err := ok2xx(after)
	if err != nil {
		return fmt.Errorf("reading book %s back: %w", c.id, err)
	}
	node := dig(rv, "data", "find", "edges", 0, "node")
	price, _ := dig(node, "price").(float64)
	if dig(node, "title") != in.data.book(j).Title || !near(price, 100) {
		return fmt.Errorf("after PUT /rest/v1 with only core.id and price 100, book %s should keep its title %q and cost 100: %s",
			c.id, in.data.book(j).Title, after.excerpt())
	}
	return nil
}

// checkLogin: a session token.
func checkLogin(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	if tok, _ := dig(v, "data", "login", "sessionToken").(string); tok == "" {
		return fmt.Errorf("no data.login.sessionToken: %s", c.a.excerpt())
	}
	return nil
}

// checkWebhook: the function's answer, which reports the body it was
// given.
func checkWebhook(c checkCtx) error {
	v, err := ok2xx(c.a)
	if err != nil {
		return err
	}
	sent := strings.ReplaceAll(webhookBodyTmpl, "{n}", "1")
	if dig(v, "ok") != true || dig(v, "bytes") != float64(len(sent)) {
		return fmt.Errorf("want {\"ok\": true, \"bytes\": %d} from the function: %s", len(sent), c.a.excerpt())
	}
	return nil
}
