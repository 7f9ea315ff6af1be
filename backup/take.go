package backup

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/corehq/core/store"
)

// Take writes a backup of everything st holds to w: one snapshot
// (store.Snapshot), every section of Sections, and the contents of the
// File records the snapshot holds (contents are never changed once put,
// so reading them beside the snapshot is consistent with it).
func Take(ctx context.Context, st store.Store, w io.Writer) (Manifest, error) {
	sn, err := st.Snapshot(ctx)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	defer sn.Close()
	m := Manifest{Format: FormatBackup, Version: Version, Created: time.Now().UTC().Truncate(time.Second)}
	for _, s := range Sections {
		m.Sections = append(m.Sections, s.Name)
	}
	aw, err := NewWriter(w, m)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	for _, s := range Sections {
		if err := s.Take(ctx, sn, contentsOf(st), aw); err != nil {
			return Manifest{}, fmt.Errorf("backup: section %s: %w", s.Name, err)
		}
		if err := aw.Flush(); err != nil {
			return Manifest{}, fmt.Errorf("backup: %w", err)
		}
	}
	if err := aw.Close(); err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	return m, nil
}
