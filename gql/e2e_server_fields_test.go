package gql_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
)

// TestServerSetFieldsNotSettable: an upsert naming a server-set or
// privileged field is refused (400 naming it) when the name is no field
// of the type, and ignored when it is metadata a client may send back in
// core (a record read can be sent back as is): the stored creator, times
// and trash mark are the server's, through GraphQL and REST, for the
// instance token and a session, on create and on update.
//
// hostile checklist 19: upsert input containing createdBy, owner, _id,
// tenant, createdAt, updatedAt, version, role (and core.*) → ignored or
// 400; stored values server-set.
func TestServerSetFieldsNotSettable(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	ctx := context.Background()
	get := func(typ, id string) *store.Record {
		t.Helper()
		rec, err := o.admin.env.Store.Get(ctx, o.inst, typ, id)
		if err != nil {
			t.Fatalf("reading %s %s: %v", typ, id, err)
		}
		return rec
	}
	upsertGQL := func(c *client, typ string, v map[string]any) (int, string) {
		s, b := c.do(upsertDoc, map[string]any{"v": map[string]any{typ: v}})
		return s, dump(b)
	}
	upsertREST := func(c *client, typ string, v map[string]any) (int, string) {
		return c.restRaw(http.MethodPost, "/", map[string]any{"values": map[string]any{typ: v}})
	}
	doors := map[string]func(*client, string, map[string]any) (int, string){"GraphQL": upsertGQL, "REST": upsertREST}
	callers := map[string]*client{"instance token": o.admin, "ada": o.ada}

	// Names that are no field of Book or Account, top level or in core:
	// 400 naming the name, nothing written.
	before := o.stored(t, o.admin.domain)
	for _, name := range []string{"createdBy", "owner", "_id", "id", "tenant", "createdAt", "updatedAt", "version", "role", "instance", "instanceId", "created", "updated", "trashed"} {
		for door, upsert := range doors {
			for who, c := range callers {
				status, body := upsert(c, "Book", map[string]any{"core": map[string]any{"id": "new1"}, "title": "t", name: "x"})
				if status != 400 || !strings.Contains(body, name) {
					t.Errorf("%s, %s: Book.%s: %d %s; want 400 naming it", door, who, name, status, body)
				}
				status, body = upsert(c, "Book", map[string]any{"core": map[string]any{"id": "new1", name + "X": "x"}, "title": "t"})
				if status != 400 {
					t.Errorf("%s, %s: core.%sX: %d %s; want 400", door, who, name, status, body)
				}
			}
		}
	}
	for _, name := range []string{"owner", "tenant", "_id", "version", "role", "instance_id", "impl_", "$set"} {
		for door, upsert := range doors {
			status, body := upsert(o.ada, "Book", map[string]any{"core": map[string]any{"id": "new1", name: "x"}, "title": "t"})
			if status != 400 || !strings.Contains(body, name) {
				t.Errorf("%s: core.%s: %d %s; want 400 naming it", door, name, status, body)
			}
		}
	}
	// The account's server-kept fields (the hash, the session marks) and
	// its flags.
	for _, name := range []string{auth.FieldSessionsAfter, auth.FieldKeepSession, auth.FieldSessionsUsed, "passwordHash", "role", "roles", "admin"} {
		for door, upsert := range doors {
			status, body := upsert(o.ada, "Account", map[string]any{"core": map[string]any{"id": o.adaID}, name: 0})
			if status != 400 || !strings.Contains(body, name) {
				t.Errorf("%s: Account.%s: %d %s; want 400 naming it", door, name, status, body)
			}
		}
	}
	for door, upsert := range doors {
		for _, flag := range []string{"verified", "enabled"} {
			if status, body := upsert(o.ada, "Account", map[string]any{"core": map[string]any{"id": o.adaID}, flag: flag == "verified"}); !strings.Contains(body, "FORBIDDEN") {
				t.Errorf("%s: ada sets her own %s: %d %s; want FORBIDDEN", door, flag, status, body)
			}
		}
		if status, body := upsert(o.ada, "Account", map[string]any{"core": map[string]any{"id": o.adaID}, "password": map[string]any{"value": "x", "hash": "$argon2id$v=19$m=1,t=1,p=1$c2FsdA$a2V5"}}); status != 400 {
			t.Errorf("%s: a password with a hash: %d %s; want 400", door, status, body)
		}
	}
	if diff := cmp.Diff(before, o.stored(t, o.admin.domain)); diff != "" {
		t.Errorf("refused upserts changed the books (-before +after):\n%s", diff)
	}
	acct := get("Account", o.adaID)
	if acct.Fields[auth.FieldSessionsAfter] != nil || acct.Fields["verified"] == true || acct.Fields["enabled"] == false {
		t.Errorf("ada's account after the refused upserts: %v", acct.Fields)
	}

	// Metadata sent back in core: ignored; the stored values are the
	// server's, on create and on update.
	forged := map[string]any{"created": "1999-01-01T00:00:00.000Z", "updated": "1999-01-02T00:00:00.000Z", "trashed": "1999-01-03T00:00:00.000Z",
		"createdBy": o.bobID, "app": "other", "release": "v9", "instance": "other.test", "instanceId": "01HZZZZZZZZZZZZZZZZZZZZZZZ",
		"publisherRealm": "evil", "publisherApp": "evil", "publisherRelease": "v9"}
	for door, upsert := range doors {
		id := "forged-" + door
		start := time.Now().Add(-time.Minute)
		core := map[string]any{"id": id}
		for k, v := range forged {
			core[k] = v
		}
		if status, body := upsert(o.ada, "Book", map[string]any{"core": core, "title": "forged"}); status != 200 {
			t.Fatalf("%s: an upsert with metadata sent back: %d %s", door, status, body)
		}
		created := get("Book", id)
		if created.CreatedBy != o.adaID || created.Trashed != nil || created.Created.Before(start) || created.Updated.Before(start) {
			t.Errorf("%s: stored createdBy %s (want ada %s), trashed %v, created %v, updated %v", door, created.CreatedBy, o.adaID, created.Trashed, created.Created, created.Updated)
		}
		if status, body := upsert(o.ada, "Book", map[string]any{"core": core, "title": "forged again"}); status != 200 {
			t.Fatalf("%s: the update with metadata sent back: %d %s", door, status, body)
		}
		updated := get("Book", id)
		if !updated.Created.Equal(created.Created) || updated.CreatedBy != o.adaID || updated.Trashed != nil || updated.Updated.Before(created.Updated) {
			t.Errorf("%s: after the update: created %v (was %v), createdBy %s, trashed %v, updated %v", door, updated.Created, created.Created, updated.CreatedBy, updated.Trashed, updated.Updated)
		}
		d := o.ada.data(`query($id: String!) { get(type: Book, id: $id) { ... on Book { core { createdBy app release instance publisherApp } } } }`, map[string]any{"id": id})
		want := map[string]any{"createdBy": o.adaID, "app": "bookstore", "release": "v1", "instance": o.admin.domain, "publisherApp": "bookstore"}
		if diff := cmp.Diff(want, path(d, "get", "core")); diff != "" {
			t.Errorf("%s: the metadata read back (-want +got):\n%s", door, diff)
		}
	}
	// bob's id as createdBy gives bob nothing: he does not see ada's book.
	if got := o.bob.names("Book", "title ^ 'forged'"); len(got) != 0 {
		t.Errorf("bob finds the books that named him as creator: %v", got)
	}
}

// TestCaseVariantKeys: field names differing from the schema's only in
// letter case, at the top level, in core and in nested records, are
// unknown fields: 400 naming them, through GraphQL and REST; nothing is
// written.
//
// hostile checklist 20: JSON with case-variant keys ("CreatedBy") → 400.
func TestCaseVariantKeys(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	before := o.stored(t, o.admin.domain)
	for _, tc := range []struct {
		name string
		typ  string
		v    map[string]any
		says string
	}{
		{"Title", "Book", map[string]any{"core": map[string]any{"id": "cv"}, "Title": "t"}, "Title"},
		{"TITLE", "Book", map[string]any{"core": map[string]any{"id": "cv"}, "TITLE": "t"}, "TITLE"},
		{"title and Title", "Book", map[string]any{"core": map[string]any{"id": "cv"}, "title": "t", "Title": "u"}, "Title"},
		{"CreatedBy", "Book", map[string]any{"core": map[string]any{"id": "cv"}, "CreatedBy": "x"}, "CreatedBy"},
		{"Core", "Book", map[string]any{"Core": map[string]any{"id": "cv"}, "title": "t"}, "Core"},
		{"core.ID", "Book", map[string]any{"core": map[string]any{"ID": "cv"}, "title": "t"}, "ID"},
		{"core.Id", "Book", map[string]any{"core": map[string]any{"Id": "cv"}, "title": "t"}, "Id"},
		{"core.CreatedBy", "Book", map[string]any{"core": map[string]any{"id": "cv", "CreatedBy": "x"}, "title": "t"}, "CreatedBy"},
		{"Price", "Book", map[string]any{"core": map[string]any{"id": "cv"}, "Price": 3}, "Price"},
		{"nested BestBook", "Author", map[string]any{"core": map[string]any{"id": "cva"}, "name": "n", "BestBook": map[string]any{"title": "t"}}, "BestBook"},
		{"nested Title", "Author", map[string]any{"core": map[string]any{"id": "cva"}, "name": "n", "bestbook": map[string]any{"Title": "t"}}, "Title"},
		{"Account Username", "Account", map[string]any{"core": map[string]any{"id": "cvacct"}, "Username": "mallory", "password": map[string]any{"value": "mallory's password"}}, "Username"},
		{"Account Password", "Account", map[string]any{"core": map[string]any{"id": "cvacct"}, "username": "mallory", "Password": map[string]any{"value": "mallory's password"}}, "Password"},
		{"Account Verified", "Account", map[string]any{"core": map[string]any{"id": "cvacct"}, "username": "mallory", "Verified": true}, "Verified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for who, c := range map[string]*client{"instance token": o.admin, "ada": o.ada} {
				status, body := c.do(upsertDoc, map[string]any{"v": map[string]any{tc.typ: tc.v}})
				if status != 400 || !strings.Contains(dump(body), tc.says) {
					t.Errorf("GraphQL, %s: %d %s; want 400 naming %s", who, status, dump(body), tc.says)
				}
				rs, rb := c.restRaw(http.MethodPost, "/", map[string]any{"values": map[string]any{tc.typ: tc.v}})
				if rs != 400 || !strings.Contains(rb, tc.says) {
					t.Errorf("REST, %s: %d %s; want 400 naming %s", who, rs, rb, tc.says)
				}
			}
		})
	}
	if diff := cmp.Diff(before, o.stored(t, o.admin.domain)); diff != "" {
		t.Errorf("refused upserts changed the books (-before +after):\n%s", diff)
	}
	for _, id := range []string{"cva", "cvacct"} {
		for _, typ := range []string{"Author", "Account"} {
			if _, err := o.admin.env.Store.Get(context.Background(), o.inst, typ, id); err == nil {
				t.Errorf("a refused upsert created %s %s", typ, id)
			}
		}
	}
}
