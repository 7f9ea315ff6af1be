package oci

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/internal/names"
	"github.com/corehq/core/store"
)

// docToken is the store kind of publishing tokens, keyed by token id.
const docToken = "registry-token"

// maxLabelLen bounds a token's label.
const maxLabelLen = 64

// Token is a publishing token as the admin API shows it: never its
// secret, which is shown once, when it is issued.
type Token struct {
	ID  string `json:"id"`
	App string `json:"app"`
	// Name is the issuer's label ("ci", "laptop"), optional.
	Name    string    `json:"name,omitempty"`
	Created time.Time `json:"created"`
}

// tokenDoc is a token as stored: only the SHA-256 of the token text.
type tokenDoc struct {
	Token
	SHA256 string `json:"sha256"`
}

// Tokens keeps the per-app publishing tokens: the registry password of
// developers and CI systems that may push and pull the images of one app
// (and no other). The token text is "<id>.<secret>"; the store keeps its
// SHA-256 under the id, so a check is one document read and a
// constant-time comparison. Safe for concurrent use.
type Tokens struct {
	st store.Store
}

// NewTokens returns the tokens kept in st.
func NewTokens(st store.Store) *Tokens { return &Tokens{st: st} }

// Issue makes a token for app and returns it with its text, which is not
// kept and cannot be shown again.
func (t *Tokens) Issue(ctx context.Context, app, name string) (Token, string, error) {
	if !validName(app) {
		return Token{}, "", errcode.New(errcode.BadRequest,
			"app %q cannot have images: registry names are 1 to %d lowercase letters, digits, '.', '_' and '-'", app, names.MaxLen)
	}
	if len(name) > maxLabelLen || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return Token{}, "", errcode.New(errcode.BadRequest, "name: at most %d printable characters", maxLabelLen)
	}
	secret, _ := auth.NewToken()
	tok := Token{ID: store.NewID(), App: app, Name: name, Created: time.Now().UTC().Truncate(time.Second)}
	text := tok.ID + "." + secret
	hash := auth.HashToken(text)
	raw, err := json.Marshal(tokenDoc{Token: tok, SHA256: hex.EncodeToString(hash[:])})
	if err != nil {
		return Token{}, "", fmt.Errorf("oci: encoding a token: %w", err)
	}
	if err := t.st.PutDoc(ctx, docToken, tok.ID, raw); err != nil {
		return Token{}, "", fmt.Errorf("oci: storing a token: %w", err)
	}
	return tok, text, nil
}

// List returns an app's tokens, oldest first.
func (t *Tokens) List(ctx context.Context, app string) ([]Token, error) {
	docs, err := t.st.ListDocs(ctx, docToken)
	if err != nil {
		return nil, fmt.Errorf("oci: listing tokens: %w", err)
	}
	out := []Token{}
	for _, raw := range docs {
		var d tokenDoc
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("oci: decoding a token: %w", err)
		}
		if d.App == app {
			out = append(out, d.Token)
		}
	}
	slices.SortFunc(out, func(a, b Token) int { return strings.Compare(a.ID, b.ID) }) // ULIDs: creation order
	return out, nil
}

// Revoke removes a token of app and returns it; it stops working at
// once, in every process. NOT_FOUND when app has no such token.
func (t *Tokens) Revoke(ctx context.Context, app, id string) (Token, error) {
	d, err := t.doc(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && d.App != app {
		return Token{}, errcode.New(errcode.NotFound, "app %s has no publishing token %s", app, id)
	}
	if err != nil {
		return Token{}, err
	}
	if err := t.st.DeleteDoc(ctx, docToken, id); err != nil {
		return Token{}, fmt.Errorf("oci: deleting a token: %w", err)
	}
	return d.Token, nil
}

// Check returns the token whose text is text; ok is false when there is
// none (malformed, unknown or revoked).
func (t *Tokens) Check(ctx context.Context, text string) (tok Token, ok bool, err error) {
	id, _, found := strings.Cut(text, ".")
	if !found || id == "" || len(id) > 64 {
		return Token{}, false, nil
	}
	d, err := t.doc(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, false, nil
	}
	if err != nil {
		return Token{}, false, err
	}
	want, err := hex.DecodeString(d.SHA256)
	if err != nil || len(want) != 32 {
		return Token{}, false, fmt.Errorf("oci: token %s has a malformed hash", id)
	}
	if !auth.TokenMatches(text, [32]byte(want)) {
		return Token{}, false, nil
	}
	return d.Token, true, nil
}

func (t *Tokens) doc(ctx context.Context, id string) (*tokenDoc, error) {
	raw, err := t.st.GetDoc(ctx, docToken, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("oci: reading token %s: %w", id, err)
	}
	var d tokenDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("oci: decoding token %s: %w", id, err)
	}
	return &d, nil
}
