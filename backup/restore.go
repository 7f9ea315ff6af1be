package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/corehq/core/store"
)

// ErrNotEmpty: Restore's store holds data already.
var ErrNotEmpty = errors.New("backup: the store is not empty")

// Empty reports whether st holds no instance data and no document.
func Empty(ctx context.Context, st store.Store) (bool, error) {
	sn, err := st.Snapshot(ctx)
	if err != nil {
		return false, err
	}
	defer sn.Close()
	insts, err := sn.Instances(ctx)
	if err != nil {
		return false, err
	}
	kinds, err := sn.DocKinds(ctx)
	if err != nil {
		return false, err
	}
	return len(insts) == 0 && len(kinds) == 0, nil
}

// Restore puts a backup read from r into st, which must be empty
// (ErrNotEmpty). declare is called once the documents are in and before
// the first record loads, to declare the instances' types (cmd/cored
// passes tenant.DeclareStored), so that indexes and unique values hold
// from the first record. Read the archive with Verify first: a corrupt
// archive is found only at its end, after what came before it was
// written.
func Restore(ctx context.Context, st store.Store, r io.Reader, declare func(context.Context) error) (Manifest, error) {
	empty, err := Empty(ctx, st)
	if err != nil {
		return Manifest{}, fmt.Errorf("backup: %w", err)
	}
	if !empty {
		return Manifest{}, ErrNotEmpty
	}
	ar, err := NewReader(r, FormatBackup)
	if err != nil {
		return Manifest{}, err
	}
	known := map[string]Section{}
	for _, s := range Sections {
		known[s.Name] = s
	}
	for _, name := range ar.Manifest.Sections {
		if _, ok := known[name]; !ok {
			return Manifest{}, fmt.Errorf("backup: the archive holds section %q, which this build does not know", name)
		}
	}
	declared := false
	for {
		e, err := ar.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Manifest{}, err
		}
		section, rest, _ := strings.Cut(e.Name, "/")
		s, ok := known[section]
		if !ok {
			return Manifest{}, fmt.Errorf("%w: entry %s belongs to no section", ErrCorrupt, e.Name)
		}
		if section != "docs" && !declared {
			if err := declare(ctx); err != nil {
				return Manifest{}, fmt.Errorf("backup: declaring the instances' types: %w", err)
			}
			declared = true
		}
		if err := s.Restore(ctx, st, rest, e); err != nil {
			return Manifest{}, fmt.Errorf("backup: %s: %w", e.Name, err)
		}
	}
	if !declared {
		if err := declare(ctx); err != nil {
			return Manifest{}, fmt.Errorf("backup: declaring the instances' types: %w", err)
		}
	}
	return ar.Manifest, nil
}
