package gql

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// maxSecretsPerWrite bounds the @secret values one write hashes: each
// costs an Argon2id hash.
const maxSecretsPerWrite = 20

// ruleError is the answer to a write that breaks a validation directive:
// it names the type, the field and the rule.
func ruleError(path string, t *schema.Type, f *schema.Field, rule, format string, args ...any) error {
	return errcode.New(errcode.BadRequest, "%s: %s.%s %s: %s", path, t.Name, f.Name, rule, fmt.Sprintf(format, args...))
}

// secretValue hashes the value of a @secret field.
func (u *upserter) secretValue(v any, path string) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, errcode.New(errcode.BadRequest, "%s: %s is not a String", path, describe(v))
	}
	if len(s) > auth.MaxPasswordBytes {
		return nil, errcode.New(errcode.BadRequest, "%s: a @secret value may be at most %d bytes long", path, auth.MaxPasswordBytes)
	}
	if u.secrets++; u.secrets > maxSecretsPerWrite {
		return nil, errcode.New(errcode.TooComplex, "%s: one write may set at most %d @secret values (each is hashed)", path, maxSecretsPerWrite)
	}
	return u.c.Accounts.HashPassword(u.p.Context, s)
}

// checkValue applies f's rules to one value set in a write.
func (u *upserter) checkValue(t *schema.Type, f *schema.Field, v any, path string) error {
	r := f.Rules
	if v == nil {
		switch {
		case r.NotNull:
			return ruleError(path, t, f, "@notNull", "cannot be null")
		case r.NotEmpty:
			return ruleError(path, t, f, "@notEmpty", "cannot be null")
		}
		return nil
	}
	if r.NotEmpty {
		if s, ok := v.(string); ok && s == "" {
			return ruleError(path, t, f, "@notEmpty", "cannot be the empty string")
		}
		if l, ok := v.([]any); ok && len(l) == 0 {
			return ruleError(path, t, f, "@notEmpty", "cannot be the empty list")
		}
	}
	items, isList := v.([]any)
	if !isList {
		items = []any{v}
	}
	for i, e := range items {
		p := path
		if isList {
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		if err := u.checkItem(t, f, e, p); err != nil {
			return err
		}
	}
	return nil
}

// checkItem applies the rules that hold for each element of a value.
func (u *upserter) checkItem(t *schema.Type, f *schema.Field, v any, path string) error {
	r := f.Rules
	s, isString := v.(string)
	if !isString {
		return nil // the rules below apply to Strings and DateTimes only
	}
	if l := r.Length; l != nil {
		n := utf8.RuneCountInString(s)
		if n < l.Min || (l.Max >= 0 && n > l.Max) {
			return ruleError(path, t, f, lengthRule(l), "%s is %d characters long", describe(s), n)
		}
	}
	if p := r.Pattern; p != nil && !patternMatches(p, s) {
		how := "one of"
		if p.AllMustMatch {
			how = "all of"
		}
		return ruleError(path, t, f, "@pattern", "%s does not match %s %s", describe(s), how, quoteAll(p.Source))
	}
	if r.Email && !validEmail(s) {
		return ruleError(path, t, f, "@email", "%s is not an e-mail address", describe(s))
	}
	if r.Past || r.Future {
		at, err := parseTime(s)
		if err != nil {
			return nil // not a DateTime: the scalar refused it already
		}
		if r.Past && !at.Before(u.c.now) {
			return ruleError(path, t, f, "@past", "%s is not in the past", s)
		}
		if r.Future && !at.After(u.c.now) {
			return ruleError(path, t, f, "@future", "%s is not in the future", s)
		}
	}
	return nil
}

// lengthRule writes @length as declared.
func lengthRule(l *schema.Length) string {
	if l.Max < 0 {
		return fmt.Sprintf("@length(min: %d)", l.Min)
	}
	return fmt.Sprintf("@length(min: %d, max: %d)", l.Min, l.Max)
}

// patternMatches reports whether s matches p's expressions, one of them
// or, with AllMustMatch, all of them.
func patternMatches(p *schema.Pattern, s string) bool {
	for _, re := range p.Regex {
		if re.MatchString(s) != p.AllMustMatch {
			return !p.AllMustMatch
		}
	}
	return p.AllMustMatch
}

// quoteAll writes expressions for an error message.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// checkStored applies the rules that depend on the records as stored:
// a record created by this write must be given its @notNull and
// @notEmpty fields, and an existing record keeps its @immutable fields.
func (u *upserter) checkStored(ctx context.Context) error {
	byType := map[string][]string{}
	for _, op := range u.ops {
		if t, ok := u.c.schema.model.Type(op.Type); ok && hasStoredRules(t) {
			byType[op.Type] = append(byType[op.Type], op.ID)
		}
	}
	types := make([]string, 0, len(byType))
	for typ := range byType {
		types = append(types, typ)
	}
	sort.Strings(types)
	found := map[string]map[string]*store.Record{}
	for _, typ := range types {
		recs, err := u.c.Store.GetMany(ctx, u.c.Instance.ID, typ, byType[typ])
		if err != nil {
			return storeError(err)
		}
		found[typ] = recs
	}
	for _, op := range u.ops {
		recs, ok := found[op.Type]
		if !ok {
			continue
		}
		t, _ := u.c.schema.model.Type(op.Type)
		path := op.Type + " " + op.ID
		old, exists := recs[op.ID]
		for _, f := range t.Fields {
			if f.Rules == nil {
				continue
			}
			v, given := op.Set[f.Name]
			switch {
			case !exists && !given && (f.Rules.NotNull || f.Rules.NotEmpty):
				rule := "@notNull"
				if !f.Rules.NotNull {
					rule = "@notEmpty"
				}
				return ruleError(path, t, f, rule, "must be given when the record is created")
			case exists && given && f.Rules.Immutable && !sameValue(old.Fields[f.Name], v):
				return ruleError(path, t, f, "@immutable", "cannot change after the record is created")
			}
		}
	}
	return nil
}

// hasStoredRules reports whether t has a field checkStored looks at.
func hasStoredRules(t *schema.Type) bool {
	for _, f := range t.Fields {
		if r := f.Rules; r != nil && (r.NotNull || r.NotEmpty || r.Immutable) {
			return true
		}
	}
	return false
}

// sameValue reports whether a stored value and a value about to be
// written are the same JSON value (the stores may keep numbers in another
// Go type than the write carries).
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// linkRules applies the validation directives of a reference field to a
// link (on) or unlink of the record src to toID: a @notNull or @notEmpty
// reference is not unlinked to nothing, an @immutable one not changed.
func linkRules(t *schema.Type, f *schema.Field, src *store.Record, on bool, toID string) error {
	r := f.Rules
	if r == nil {
		return nil
	}
	path := t.Name + " " + src.ID
	cur := src.Fields[f.Name]
	var changes, empties bool
	if f.List {
		ids := store.Strings(cur)
		has := slices.Contains(ids, toID)
		changes = on != has
		empties = !on && has && len(ids) == 1
	} else {
		s, _ := cur.(string)
		changes = (on && s != toID) || (!on && s == toID)
		empties = !on && s == toID
	}
	switch {
	case changes && r.Immutable:
		return ruleError(path, t, f, "@immutable", "cannot change after the record is created")
	case empties && r.NotNull && !f.List:
		return ruleError(path, t, f, "@notNull", "cannot be null")
	case empties && r.NotEmpty:
		return ruleError(path, t, f, "@notEmpty", "cannot become empty")
	}
	return nil
}
