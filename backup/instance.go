package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// FormatExport is the format of an instance's export: the manifest names
// the instance (Exported), then come its records:
//
//	manifest.json               {"format": "core-export", "version": 1, "created",
//	                             "sections": ["records", "files"], "instance": {…}}
//	records/NNNNNN.ndjson       one record a line, every type, trashed ones too
//	files/<id>                  the content of the File record <id> (before
//	                            or after the records entry holding the record)
//	SHA256SUMS
const FormatExport = "core-export"

// Exported is the instance an export holds, in its manifest.
type Exported struct {
	ID             string `json:"id"`
	Domain         string `json:"domain"`
	App            string `json:"app"`
	Release        string `json:"release"`
	AdminAccountID string `json:"adminAccountId"`
	// Settings are the instance's settings without its env values, which
	// are sealed with the keys of the server that exported them.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// Export writes an export of one instance's records and file contents to
// w, from one snapshot of st.
func Export(ctx context.Context, st store.Store, inst Exported, w io.Writer) error {
	sn, err := st.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer sn.Close()
	raw, err := json.Marshal(inst)
	if err != nil {
		return err
	}
	aw, err := NewWriter(w, Manifest{Format: FormatExport, Version: Version, Created: time.Now().UTC().Truncate(time.Second),
		Sections: exportSections, Instance: raw})
	if err != nil {
		return err
	}
	if err := takeRecords(ctx, sn, contentsOf(st), aw, inst.ID, ""); err != nil {
		return fmt.Errorf("backup: exporting %s: %w", inst.Domain, err)
	}
	return aw.Close()
}

// OpenImport reads the manifest of an export and the instance it names.
func OpenImport(r io.Reader) (*Reader, Exported, error) {
	ar, err := NewReader(r, FormatExport)
	if err != nil {
		return nil, Exported{}, err
	}
	var inst Exported
	if err := json.Unmarshal(ar.Manifest.Instance, &inst); err != nil || inst.AdminAccountID == "" {
		return nil, Exported{}, fmt.Errorf("%w: the manifest names no instance", ErrCorrupt)
	}
	for _, s := range ar.Manifest.Sections {
		if !slices.Contains(exportSections, s) {
			return nil, Exported{}, fmt.Errorf("backup: the export holds section %q, which this build does not know", s)
		}
	}
	return ar, inst, nil
}

// exportSections are the sections of an export.
var exportSections = []string{"records", "files"}

// ImportError names the entry and line of an import that failed, and why.
type ImportError struct {
	Entry string
	Line  int
	Err   error
}

func (e *ImportError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.Entry, e.Err)
	}
	return fmt.Sprintf("%s line %d: %v", e.Entry, e.Line, e.Err)
}

func (e *ImportError) Unwrap() error { return e.Err }

// ImportOptions bound and check an import.
type ImportOptions struct {
	// Quota bounds what the instance may hold (the zero Quota bounds
	// nothing): an import that would pass it fails with a
	// *store.QuotaError.
	Quota store.Quota
	// Check, when set, refuses a record the instance's release does not
	// accept (an unknown type or field).
	Check func(r *store.Record) error
}

// Imported counts what an import loaded.
type Imported struct {
	Records   int64
	Files     int64
	FileBytes int64
}

// Import loads the records and file contents of an export (ar, from
// OpenImport) into the instance inst, records 1,000 a call. The archive's
// checksums are checked at its end, so a corrupt export fails after
// records have loaded: the caller drops the instance's records
// (tenant.ImportInstance does); the contents Import put are removed here.
func Import(ctx context.Context, st store.Store, ar *Reader, inst string, opts ImportOptions) (Imported, error) {
	var n Imported
	err := importEntries(ctx, st, ar, inst, opts, &n)
	if err != nil {
		if c := contentsOf(st); c != nil && n.Files > 0 {
			err = errors.Join(err, c.DropInstance(context.WithoutCancel(ctx), inst))
		}
	}
	return n, err
}

func importEntries(ctx context.Context, st store.Store, ar *Reader, inst string, opts ImportOptions, n *Imported) error {
	var exp Exported
	_ = json.Unmarshal(ar.Manifest.Instance, &exp) // OpenImport read it
	from := exp.ID
	for {
		e, err := ar.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if id, ok := strings.CutPrefix(e.Name, "files/"); ok {
			w, err := putContent(ctx, st, inst, id, e)
			if err != nil {
				return &ImportError{Entry: e.Name, Err: err}
			}
			n.Files++
			n.FileBytes += w.Size
			if err := checkQuota(ctx, st, inst, opts.Quota, n.FileBytes); err != nil {
				return err
			}
			continue
		}
		if !strings.HasPrefix(e.Name, "records/") {
			return fmt.Errorf("%w: entry %s belongs to no section", ErrCorrupt, e.Name)
		}
		batch := make([]*store.Record, 0, loadBatch)
		first := 0 // the line of batch[0]
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			if err := st.Load(ctx, inst, batch); err != nil {
				return &ImportError{Entry: e.Name, Line: first, Err: fmt.Errorf("the batch of %d records from here: %w", len(batch), err)}
			}
			n.Records += int64(len(batch))
			batch = batch[:0]
			return checkQuota(ctx, st, inst, opts.Quota, n.FileBytes)
		}
		err = lines(e.Data, func(line int, text []byte) error {
			r, err := parseRecord(text)
			if err == nil {
				rehome(r, from, inst)
			}
			if err == nil && opts.Check != nil {
				err = opts.Check(r)
			}
			if err != nil {
				return &ImportError{Entry: e.Name, Line: line, Err: err}
			}
			if len(batch) == 0 {
				first = line
			}
			if batch = append(batch, r); len(batch) == loadBatch {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
	}
}

// rehome points a File record's download path (url.path,
// "/file/<instance id>-<file id>.<ext>") at the instance it is imported
// into: the path names the instance, whose id an import changes.
func rehome(r *store.Record, from, to string) {
	if r.Type != fileType || from == "" {
		return
	}
	url, _ := r.Fields["url"].(map[string]any)
	p, _ := url["path"].(string)
	if rest, ok := strings.CutPrefix(p, "/file/"+from+"-"); ok {
		url["path"] = "/file/" + to + "-" + rest
	}
}

// checkQuota fails once the instance holds more than quota allows, its
// file contents (fileBytes) counted in its storage.
func checkQuota(ctx context.Context, st store.Store, inst string, quota store.Quota, fileBytes int64) error {
	if quota == (store.Quota{}) {
		return nil
	}
	u, err := st.Usage(ctx, inst)
	if err != nil {
		return err
	}
	u.StorageBytes += fileBytes
	if err := quota.Check([]store.Op{{Kind: store.OpUpsert}}, store.Usage{}, u); err != nil {
		var q *store.QuotaError
		if errors.As(err, &q) {
			return fmt.Errorf("the import would take the instance past its quota: %w", err)
		}
		return err
	}
	return nil
}
