package tenant

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// DeclareStored declares to st the record types of every instance its
// documents hold, from the release each runs: what a restore does before
// it loads records, so that indexes and unique values hold from the
// first. It needs no key (an instance's sealed env stays sealed).
func DeclareStored(ctx context.Context, st store.Store) error {
	relDocs, err := st.ListDocs(ctx, docRelease)
	if err != nil {
		return err
	}
	instDocs, err := st.ListDocs(ctx, docInstance)
	if err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(instDocs)) {
		var d instanceDoc
		if err := json.Unmarshal(instDocs[key], &d); err != nil {
			return fmt.Errorf("tenant: instance %s: decoding: %w", key, err)
		}
		raw, ok := relDocs[releaseKey(d.App, d.Release)]
		if !ok {
			return fmt.Errorf("tenant: instance %s runs release %s/%s, which is not stored", key, d.App, d.Release)
		}
		var rd releaseDoc
		if err := json.Unmarshal(raw, &rd); err != nil {
			return fmt.Errorf("tenant: release %s/%s: decoding: %w", d.App, d.Release, err)
		}
		m, err := schema.Parse(rd.Schema, schema.DefaultLimits())
		if err != nil {
			return fmt.Errorf("tenant: release %s/%s: %w", d.App, d.Release, err)
		}
		if err := st.Declare(ctx, d.ID, Specs(m)); err != nil {
			return fmt.Errorf("tenant: instance %s: declaring: %w", key, err)
		}
	}
	return nil
}
