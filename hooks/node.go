package hooks

import (
	"time"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// node renders a record as a hook's body carries it: the fields its type
// declares (hidden ones, such as passwords and hook secrets, never) and
// its metadata under "core", as get answers them.
func node(t *schema.Type, r *store.Record) map[string]any {
	out := make(map[string]any, len(t.Fields)+1)
	for _, f := range t.Fields {
		if f.Hidden {
			continue
		}
		if v, ok := r.Fields[f.Name]; ok {
			out[f.Name] = v
		}
	}
	core := map[string]any{"id": r.ID, "created": stamp(r.Created), "updated": stamp(r.Updated)}
	if r.Trashed != nil {
		core["trashed"] = stamp(*r.Trashed)
	}
	if r.CreatedBy != "" {
		core["createdBy"] = r.CreatedBy
	}
	if r.Impl != "" {
		core["impl"] = r.Impl
	}
	out["core"] = core
	return out
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
