package tenant

import (
	"context"
	"fmt"
	"strings"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// checkBreaking refuses moving an instance from release cur to next when
// its stored records would not survive the change: a field whose type
// changes while records hold values, a field that becomes required while
// records lack it, an enum that loses a value records hold
// (schema.BreakingChanges). Each candidate costs one store query of at
// most one record id. The answer is 409 BREAKING_CHANGE listing every
// such field, with extensions.changes for programs.
func (r *Directory) checkBreaking(ctx context.Context, inst *Instance, cur, next *Release) error {
	var found []schema.Breaking
	for _, b := range schema.BreakingChanges(cur.Model, next.Model) {
		hit, err := r.anyRecord(ctx, inst.ID, cur.Model, b)
		if err != nil {
			return fmt.Errorf("tenant: instance %s: checking %s.%s: %w", inst.Domain, b.Type, b.Field, err)
		}
		if hit {
			found = append(found, b)
		}
	}
	if len(found) == 0 {
		return nil
	}
	parts := make([]string, len(found))
	changes := make([]map[string]any, len(found))
	for i, b := range found {
		held := "records hold values"
		if b.Missing {
			held = "records lack it"
		}
		parts[i] = fmt.Sprintf("%s.%s %s, and %s", b.Type, b.Field, b.Change, held)
		changes[i] = map[string]any{"type": b.Type, "field": b.Field, "change": b.Change, "records": held}
	}
	return &errcode.Error{
		Code: errcode.BreakingChange,
		Message: fmt.Sprintf("release %s would break records instance %s holds: %s (set \"force\": true to move anyway; the records keep their values)",
			next.Name, inst.Domain, strings.Join(parts, "; ")),
		Err:        ErrBreaking,
		Extensions: map[string]any{"changes": changes},
	}
}

// anyRecord reports whether some record of the instance (trashed ones
// included) matches a breaking change's probe.
func (r *Directory) anyRecord(ctx context.Context, instID string, old *schema.Model, b schema.Breaking) (bool, error) {
	q, err := arcql.Parse(b.Probe, arcql.DefaultLimits())
	if err == nil {
		q, err = arcql.Bind(q, old, b.Type, instID)
	}
	if err != nil {
		return false, fmt.Errorf("probe %q: %w", b.Probe, err)
	}
	recs, err := r.st.Find(ctx, instID, &store.Query{Type: b.Type, Filter: q.Filter, IncludeTrashed: true, Limit: 1, IDsOnly: true})
	return len(recs) > 0, err
}
