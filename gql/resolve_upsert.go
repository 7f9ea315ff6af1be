package gql

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/schedule"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// eachEntry calls f with every entry of a union input ({Type: entry or
// [entries]}) and its path ("Type[i]"), the types in name order so that
// the writes (and any error) are the same for the same input; an unknown
// type is refused.
func eachEntry(m *schema.Model, values map[string]any, f func(t *schema.Type, path string, entry any) error) error {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t, ok := m.Type(name)
		if !ok {
			return errcode.New(errcode.UnknownType, "unknown type %s", name)
		}
		list, isList := values[name].([]any)
		if !isList {
			list = []any{values[name]}
		}
		for i, e := range list {
			if err := f(t, name+"["+strconv.Itoa(i)+"]", e); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveUpsert answers upsert: every record of the input, nested ones
// included, is created or merged in one store write, so that a failure
// anywhere leaves nothing half-written.
func resolveUpsert(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	values, _ := rawArg(p, "values").(map[string]any)
	if out, ok, err := upsertMailRequests(p, values); ok {
		return out, err
	}
	u := newUpserter(c, p)
	if err := eachEntry(c.schema.model, values, func(t *schema.Type, path string, in any) error {
		_, err := u.record(t, in, path, true)
		return err
	}); err != nil {
		return nil, err
	}
	if err := u.checkRefs(p); err != nil {
		return nil, err
	}
	if err := u.checkOwner(p); err != nil {
		return nil, err
	}
	if err := u.checkGrantTargets(p); err != nil {
		return nil, err
	}
	if err := u.checkStored(p.Context); err != nil {
		return nil, err
	}
	triggerArgs := map[string]any{"values": values}
	triggers, err := u.upsertTriggers(p.Context, triggerArgs)
	if err != nil {
		return nil, err
	}
	results, err := c.write(p.Context, u.ops)
	if err != nil {
		return nil, storeError(err)
	}
	u.startUpsertAfters(p.Context, triggers, triggerArgs, results)
	if err := u.notedHooks(p.Context, results); err != nil {
		return nil, err
	}
	if err := u.notedSchedules(p.Context); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(u.top))
	for _, i := range u.top {
		out = append(out, &meta{rec: results[i].Record, hideCreated: !results[i].Created})
	}
	return out, nil
}

// rawArg returns an argument as the client sent it: a literal from the
// document, or a variable's value before graphql-go's coercion (which
// drops explicit nulls).
func rawArg(p graphql.ResolveParams, name string) any {
	c := callFrom(p.Context)
	for _, a := range p.Info.FieldASTs[0].Arguments {
		if a.Name.Value == name {
			return astValue(a.Value, c.vars, p.Info.VariableValues)
		}
	}
	return p.Args[name]
}

// astValue turns a document value into a JSON-shaped Go value, reading
// variables from raw (falling back to the coerced value, which carries
// declared defaults).
func astValue(v ast.Value, raw, coerced map[string]any) any {
	switch v := v.(type) {
	case *ast.Variable:
		name := v.Name.Value
		if val, ok := raw[name]; ok {
			return val
		}
		return coerced[name]
	case *ast.ListValue:
		out := make([]any, 0, len(v.Values))
		for _, e := range v.Values {
			out = append(out, astValue(e, raw, coerced))
		}
		return out
	case *ast.ObjectValue:
		out := make(map[string]any, len(v.Fields))
		for _, f := range v.Fields {
			out[f.Name.Value] = astValue(f.Value, raw, coerced)
		}
		return out
	}
	return literalValue(v)
}

// upserter collects the writes of one upsert.
type upserter struct {
	c *call
	p graphql.ResolveParams
	// creating is set by createAccount: the records are new.
	creating bool
	ops      []store.Op
	// top are the indexes in ops of the top-level records, in input order.
	top []int
	// refs are records referenced by id only: type → id → path, checked to
	// exist before writing.
	refs map[string]map[string]string
	// grantTargets are the records an account's AccessRights name, and
	// members the accounts AccessRights name.
	grantTargets, members []grantTarget
	// secrets counts the @secret values hashed (maxSecretsPerWrite).
	secrets int
}

func newUpserter(c *call, p graphql.ResolveParams) *upserter {
	return &upserter{c: c, p: p, refs: map[string]map[string]string{}}
}

// record adds the upsert of one record input and returns its id.
func (u *upserter) record(t *schema.Type, in any, path string, top bool) (string, error) {
	obj, ok := in.(map[string]any)
	if !ok {
		return "", errcode.New(errcode.BadRequest, "%s: expected a %s object", path, t.Name)
	}
	var id, impl string
	if core, ok := obj["core"].(map[string]any); ok {
		if s, ok := core["id"].(string); ok {
			id = s
		}
		if s, ok := core["impl"].(string); ok {
			impl = s
		}
	} else if obj["core"] != nil {
		return "", errcode.New(errcode.BadRequest, "%s.core: expected an object", path)
	}
	if id != "" && !validID(id) {
		return "", errcode.New(errcode.BadRequest, "%s.core.id: %q is not a valid id (1 to 128 characters, no control characters)", path, id)
	}
	if !top && id != "" && len(obj) == 1 {
		// A nested record carrying only core.id references that record.
		if u.refs[t.Name] == nil {
			u.refs[t.Name] = map[string]string{}
		}
		u.refs[t.Name][id] = path
		return id, nil
	}
	if err := u.mayWrite(t, id, obj, path); err != nil {
		return "", err
	}
	set := make(map[string]any, len(obj))
	for name, v := range obj {
		if name == "core" {
			continue
		}
		f, ok := t.Field(name)
		if !ok {
			return "", errcode.New(errcode.BadRequest, "%s: unknown field %s.%s", path, t.Name, name)
		}
		val, err := u.value(t, f, v, path+"."+name)
		if err != nil {
			return "", err
		}
		if f.Rules != nil {
			checked := val
			if f.Rules.Secret {
				checked = v // the rules see the value, not its hash
			}
			if err := u.checkValue(t, f, checked, path+"."+name); err != nil {
				return "", err
			}
		}
		set[name] = val
		if f.Hidden && t.Name == "Account" && !u.creating {
			// A new password revokes the account's other sessions (all of
			// them when the instance token sets it).
			set[auth.FieldSessionsAfter] = u.c.Accounts.Now().UnixMicro()
			set[auth.FieldKeepSession] = nullable(u.c.Principal.Session)
		}
	}
	// fresh: the id is generated here, so the op creates the record and
	// no other writer can know it yet (store.Op.New).
	fresh := id == ""
	if fresh {
		id = store.NewID()
	}
	switch t.Name {
	case "Webhook":
		if err := u.checkWebhook(u.p, obj, set, id, path); err != nil {
			return "", err
		}
	case access.Type:
		if err := u.checkAccessRight(set, path); err != nil {
			return "", err
		}
	case hooks.Type:
		if err := u.checkEventHook(u.p.Context, set, id, path); err != nil {
			return "", err
		}
	case schedule.Type:
		if err := u.checkSchedule(u.p.Context, obj, set, id, path); err != nil {
			return "", err
		}
	}
	var required, keep []string
	for _, f := range t.Fields {
		if f.NonNull || (f.Rules != nil && (f.Rules.NotNull || f.Rules.NotEmpty)) {
			required = append(required, f.Name)
		}
		if _, given := set[f.Name]; given && f.Rules != nil && f.Rules.Immutable {
			keep = append(keep, f.Name)
		}
	}
	if top {
		u.top = append(u.top, len(u.ops))
	}
	u.ops = append(u.ops, store.Op{
		Kind:      store.OpUpsert,
		Type:      t.Name,
		ID:        id,
		Set:       set,
		Now:       u.c.now,
		CreatedBy: u.c.Principal.AccountID,
		Impl:      impl,
		Required:  required,
		Keep:      keep,
		New:       fresh,
	})
	return id, nil
}

// value checks and converts one field's input value.
func (u *upserter) value(t *schema.Type, f *schema.Field, v any, path string) (any, error) {
	if v == nil {
		if f.NonNull {
			return nil, errcode.New(errcode.BadRequest, "%s: %s.%s is required and cannot be cleared", path, t.Name, f.Name)
		}
		return nil, nil
	}
	if f.List {
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		out := make([]any, 0, len(list))
		for i, e := range list {
			if e == nil {
				return nil, errcode.New(errcode.BadRequest, "%s[%d]: null is not allowed in a list", path, i)
			}
			val, err := u.one(t, f, e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		return out, nil
	}
	return u.one(t, f, v, path)
}

// one converts a single (non-list) value of field f.
func (u *upserter) one(t *schema.Type, f *schema.Field, v any, path string) (any, error) {
	m := u.c.schema.model
	switch {
	case f.Rules != nil && f.Rules.Secret:
		return u.secretValue(v, path)
	case f.Hidden && t.Name == hooks.Type:
		return u.hookSecret(v, path)
	case f.Hidden:
		// The other hidden field is Account.password: a PasswordInput.
		in, _ := v.(map[string]any)
		pw, ok := in["value"].(string)
		if !ok {
			return nil, errcode.New(errcode.BadRequest, "%s: expected {value: \"<password>\"}", path)
		}
		if err := auth.CheckPassword(pw); err != nil {
			return nil, err
		}
		return u.c.Accounts.HashPassword(u.p.Context, pw)
	case f.Kind == schema.KindRef:
		if t.Name == access.Type && f.Name == "members" {
			if id, ok := u.member(v, path); ok {
				return id, nil
			}
		}
		if in, ok := m.Interface(f.Type); ok {
			return u.interfaceRef(in, v, path)
		}
		target, _ := m.Type(f.Type)
		return u.record(target, v, path, false)
	case f.Kind == schema.KindObject:
		obj, _ := m.Object(f.Type)
		return u.object(obj, v, path)
	case f.Kind == schema.KindEnum:
		s, ok := v.(string)
		e, _ := m.Enum(f.Type)
		if ok && e != nil {
			for _, val := range e.Values {
				if val == s {
					return s, nil
				}
			}
		}
		return nil, errcode.New(errcode.BadRequest, "%s: %v is not a value of enum %s", path, v, f.Type)
	}
	return scalarValue(f.Type, v, path)
}

// object converts an embedded object's input.
func (u *upserter) object(t *schema.Type, v any, path string) (any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errcode.New(errcode.BadRequest, "%s: expected a %s object", path, t.Name)
	}
	out := make(map[string]any, len(obj))
	for name, fv := range obj {
		f, ok := t.Field(name)
		if !ok {
			return nil, errcode.New(errcode.BadRequest, "%s: unknown field %s.%s", path, t.Name, name)
		}
		val, err := u.value(t, f, fv, path+"."+name)
		if err != nil {
			return nil, err
		}
		if val != nil {
			out[name] = val
		}
	}
	for _, f := range t.Fields {
		if f.NonNull && out[f.Name] == nil {
			return nil, errcode.New(errcode.BadRequest, "%s: %s.%s is required", path, t.Name, f.Name)
		}
	}
	return out, nil
}

// checkRefs fails when a record referenced by id only does not exist in
// the instance; whether the caller may read it does not matter (the
// answer tells an existing id from another, nothing of the record).
func (u *upserter) checkRefs(p graphql.ResolveParams) error {
	written := map[string]bool{}
	for _, op := range u.ops {
		written[op.Type+"\x00"+op.ID] = true
	}
	types := make([]string, 0, len(u.refs))
	for typ := range u.refs {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		var ids []string
		for id := range u.refs[typ] {
			if !writtenAs(u.c.schema.model, written, typ, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		sort.Strings(ids)
		found, err := getMany(p.Context, u.c, typ, ids)
		if err != nil {
			return storeError(err)
		}
		for _, id := range ids {
			// Existence only: a reference may name a record the caller
			// cannot read (reading through it obeys the rules).
			if _, ok := found[id]; !ok {
				return errcode.New(errcode.NotFound, "%s: %s %s does not exist", u.refs[typ][id], typ, id)
			}
		}
	}
	return nil
}

// scalarValue checks a scalar input value and returns it as stored.
func scalarValue(typ string, v any, path string) (any, error) {
	bad := func(want string) error {
		return errcode.New(errcode.BadRequest, "%s: %s is not %s", path, describe(v), want)
	}
	switch typ {
	case "String":
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, bad("a String")
	case "ID":
		switch v := v.(type) {
		case string:
			return v, nil
		case float64:
			if v == math.Trunc(v) {
				return fmt.Sprintf("%.0f", v), nil
			}
		case int64:
			return fmt.Sprint(v), nil
		}
		return nil, bad("an ID")
	case "Int":
		n, ok := v.(float64)
		if i, isInt := v.(int); isInt {
			n, ok = float64(i), true
		}
		if !ok || n != math.Trunc(n) || n > math.MaxInt32 || n < math.MinInt32 {
			return nil, bad("an Int (a whole number of 32 bits)")
		}
		return int64(n), nil
	case "Float":
		switch v := v.(type) {
		case float64:
			return v, nil
		case int:
			return float64(v), nil
		case int64:
			return float64(v), nil
		}
		return nil, bad("a Float")
	case "Boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, bad("a Boolean")
	case "DateTime":
		if s, ok := v.(string); ok {
			t, err := parseTime(s)
			if err != nil {
				return nil, errcode.New(errcode.BadRequest, "%s: %v", path, err)
			}
			return formatTime(t), nil
		}
		return nil, bad("a DateTime")
	case "Long":
		if n, ok := longValue(v); ok {
			return n, nil
		}
		return nil, bad("a Long (a whole number of 64 bits, or a string of its digits)")
	case "UUID":
		if s, ok := uuidValue(v); ok {
			return s, nil
		}
		return nil, bad("a UUID (such as 123e4567-e89b-12d3-a456-426614174000)")
	case "Email":
		if s, ok := emailValue(v); ok {
			return s, nil
		}
		if m, ok := v.(map[string]any); ok && m["value"] != nil {
			v = m["value"] // name what the object held
		}
		return nil, bad(`an e-mail address (a string, or {value: "<address>"})`)
	}
	// Json and custom scalars take any JSON value.
	return v, nil
}

// describe names a value in an error message without echoing large input.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return fmt.Sprintf("%q…", v[:40])
		}
		return fmt.Sprintf("%q", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// validID reports whether a client-supplied id is acceptable.
func validID(id string) bool {
	if len(id) > 128 {
		return false
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// mayWrite applies the rules of a user session to one record input: an
// account changes only its own Account record (not its enabled or
// verified flags) and creates accounts only through createAccount. An
// anonymous caller writes neither accounts nor grants.
func (u *upserter) mayWrite(t *schema.Type, id string, obj map[string]any, path string) error {
	p := u.c.Principal
	if u.creating {
		return nil
	}
	if p.Kind == auth.Anonymous && (t.Name == "Account" || t.Name == access.Type) {
		return errcode.New(errcode.Forbidden, "%s: anonymous callers may not write %s records", path, t.Name)
	}
	if p.Kind != auth.InstanceAdmin && (t.Name == hooks.Type || t.Name == schedule.Type) {
		return errcode.New(errcode.Forbidden, "%s: %s records are written with the instance token only", path, t.Name)
	}
	if p.Kind != auth.User || t.Name != "Account" {
		return nil
	}
	if id != p.AccountID {
		return errcode.New(errcode.Forbidden, "%s: an account may change only its own Account record", path)
	}
	for _, name := range []string{"enabled", "verified"} {
		if _, ok := obj[name]; ok {
			return errcode.New(errcode.Forbidden, "%s: Account.%s is set by the instance token only", path, name)
		}
	}
	if _, ok := obj["emails"]; ok {
		return errcode.New(errcode.Forbidden, "%s: a session changes its e-mail address with requestEmailChange(email, redirectTo): the new address replaces the old once verified", path)
	}
	if _, ok := obj["password"]; ok {
		// A stolen session must not become a stolen account.
		return errcode.New(errcode.Forbidden, "%s: a session changes its password with changePassword(currentPassword, newPassword), or resetPassword with a code", path)
	}
	return nil
}

// checkGrantedFields refuses a grantee's upsert of r that sets a field
// its upsert grants on r do not list.
func (u *upserter) checkGrantedFields(p graphql.ResolveParams, r *store.Record) error {
	s, err := u.c.rights(p.Context, r.Type, "upsert")
	if err != nil {
		return err
	}
	only, limited := s.Fields(r)
	if !limited {
		return nil
	}
	for _, op := range u.ops {
		if op.Type != r.Type || op.ID != r.ID {
			continue
		}
		for name := range op.Set {
			if _, ok := only[name]; !ok {
				return errcode.New(errcode.Forbidden, "%s %s: your grant does not cover the field %s", r.Type, r.ID, name)
			}
		}
	}
	return nil
}

// checkRules applies the @access rules to one record of an upsert by a
// user session or an anonymous caller (the instance token, the app's own
// key, bypasses rules as it bypasses grants): a new record is created only
// where its type's create rule (if any) holds for the record as it would
// be stored; a change the update rule allows, where neither the owner rule
// nor a grant on the whole record does, must leave a record the rule
// still allows.
func (u *upserter) checkRules(p graphql.ResolveParams, typ, id string, old *store.Record, op *store.Op) error {
	c := u.c
	if op == nil {
		return nil
	}
	if old == nil {
		rule, err := c.rule(p.Context, typ, "create")
		if err != nil {
			return err
		}
		if rule != nil && !arcql.Match(rule, &store.Record{Type: typ, ID: id, CreatedBy: c.Principal.AccountID, Fields: op.Set, Created: c.now, Updated: c.now}) {
			return errcode.New(errcode.Forbidden, "%s %s: the create rule of %s does not allow this record", typ, id, typ)
		}
		return nil
	}
	if owned(c, old) || !ruleAllows(p.Context, c, old, "update") {
		return nil // the owner rule or grants decided (may, checkGrantedFields)
	}
	if s, err := c.rights(p.Context, typ, "upsert"); err == nil && s.Allows(old) {
		if _, limited := s.Fields(old); !limited {
			return nil // a grant on the whole record allows the change anyway
		}
	}
	after := *old
	after.Fields = make(map[string]any, len(old.Fields)+len(op.Set))
	for k, v := range old.Fields {
		after.Fields[k] = v
	}
	for k, v := range op.Set {
		if v == nil {
			delete(after.Fields, k)
		} else {
			after.Fields[k] = v
		}
	}
	after.Updated = c.now
	if !ruleAllows(p.Context, c, &after, "update") {
		return errcode.New(errcode.Forbidden, "%s %s: the update rule of %s does not allow the record as changed", typ, id, typ)
	}
	return nil
}

// checkOwner refuses an upsert that names a record the caller neither
// owns nor holds an upsert grant on, and an anonymous caller's new record
// where no grant lets anonymous callers create records of its type;
// nothing is written.
func (u *upserter) checkOwner(p graphql.ResolveParams) error {
	if u.c.Principal.Kind == auth.InstanceAdmin {
		return nil
	}
	byType := map[string][]string{}
	opOf := map[string]*store.Op{}
	for i, op := range u.ops {
		byType[op.Type] = append(byType[op.Type], op.ID)
		opOf[op.Type+"\x00"+op.ID] = &u.ops[i]
	}
	types := make([]string, 0, len(byType))
	for typ := range byType {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		found, err := u.c.Store.GetMany(p.Context, u.c.Instance.ID, typ, byType[typ])
		if err != nil {
			return storeError(err)
		}
		for _, id := range byType[typ] {
			r, ok := found[id]
			if ok && !may(p.Context, u.c, r, "upsert") {
				return errcode.New(errcode.Forbidden, "%s %s belongs to another account", typ, id)
			}
			if ok && !owned(u.c, r) && !ruleAllows(p.Context, u.c, r, "update") {
				if err := u.checkGrantedFields(p, r); err != nil {
					return err
				}
			}
			if err := u.checkRules(p, typ, id, r, opOf[typ+"\x00"+id]); err != nil {
				return err
			}
			if !ok && u.c.Principal.Kind == auth.Anonymous {
				s, err := u.c.rights(p.Context, typ, "upsert")
				if err != nil {
					return err
				}
				if !s.All {
					return errcode.New(errcode.Forbidden, "%s %s: anonymous callers create %s records only where an SBP grants them upsert", typ, id, typ)
				}
			}
		}
	}
	return nil
}
