package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/corehq/core/store"
)

// Section is a named part of a backup: what it takes from a snapshot,
// and how it puts one of its entries back. Its entries are named
// "<Name>/…". A part of the service that keeps data outside the store's
// records and documents adds one to Sections; data kept in the store is
// in "docs" and "instances" already.
type Section struct {
	Name string
	// Take writes the section's entries: from the snapshot, and the
	// contents of its File records (nil when the store keeps none).
	Take func(ctx context.Context, sn store.Snapshot, contents store.Contents, w *Writer) error
	// Restore puts one entry back; rest is its name after "<Name>/".
	Restore func(ctx context.Context, st store.Store, rest string, e *Entry) error
}

// Sections are the sections of a backup, in the order they are written
// and restored: documents first, so that the instances' types can be
// declared (from their releases) before their records load.
var Sections = []Section{
	{Name: "docs", Take: takeDocs, Restore: restoreDocs},
	{Name: "instances", Take: takeInstances, Restore: restoreInstance},
}

// docLine is a service document as an archive holds it.
type docLine struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
	Data []byte `json:"data"`
}

// transientKinds are document kinds a backup leaves out: state of the
// processes running now, which a restored server makes again.
var transientKinds = map[string]bool{
	"peer":             true, // tenant: the processes sharing the store
	"registry-version": true, // tenant: each process's view of the directory
	"loginfail":        true, // auth: login throttling
}

func takeDocs(ctx context.Context, sn store.Snapshot, _ store.Contents, w *Writer) error {
	kinds, err := sn.DocKinds(ctx)
	if err != nil {
		return err
	}
	for _, kind := range kinds {
		if transientKinds[kind] {
			continue
		}
		err := sn.Docs(ctx, kind, func(key string, doc []byte) error {
			return w.Line("docs", docLine{Kind: kind, Key: key, Data: doc})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func restoreDocs(ctx context.Context, st store.Store, rest string, e *Entry) error {
	return lines(e.Data, func(n int, line []byte) error {
		var d docLine
		if err := json.Unmarshal(line, &d); err != nil || d.Kind == "" || d.Key == "" {
			return fmt.Errorf("line %d: not a document (%v)", n, err)
		}
		if err := st.PutDoc(ctx, d.Kind, d.Key, d.Data); err != nil {
			return fmt.Errorf("line %d: document %s/%s: %w", n, d.Kind, d.Key, err)
		}
		return nil
	})
}

func takeInstances(ctx context.Context, sn store.Snapshot, contents store.Contents, w *Writer) error {
	insts, err := sn.Instances(ctx)
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if err := takeInstance(ctx, sn, contents, w, inst, "instances/"+inst+"/"); err != nil {
			return fmt.Errorf("instance %s: %w", inst, err)
		}
	}
	return nil
}

// takeInstance writes an instance's records and counters under prefix.
func takeInstance(ctx context.Context, sn store.Snapshot, contents store.Contents, w *Writer, inst, prefix string) error {
	if err := takeRecords(ctx, sn, contents, w, inst, prefix); err != nil {
		return err
	}
	counters, err := sn.Counters(ctx, inst)
	if err != nil || len(counters) == 0 {
		return err
	}
	return w.JSON(prefix+"counters.json", counters)
}

// takeRecords writes an instance's records under prefix+"records", and
// the content of each File record as prefix+"files/<id>" (thumbnails are
// left out: they are made again on request). A File whose content is
// gone was deleted after the snapshot was taken, and is written without
// it: its download answers as a deleted file's.
func takeRecords(ctx context.Context, sn store.Snapshot, contents store.Contents, w *Writer, inst, prefix string) error {
	return sn.Records(ctx, inst, func(r *store.Record) error {
		if err := w.Line(prefix+"records", lineOf(r)); err != nil {
			return err
		}
		if r.Type != fileType || contents == nil {
			return nil
		}
		c, err := contents.Open(ctx, inst, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("file %s: %w", r.ID, err)
		}
		defer c.Close()
		return w.Content(prefix+"files/"+r.ID, c.Size(), c)
	})
}

// fileType is the built-in record type of uploaded files, whose ids
// name their contents.
const fileType = "File"

// contentsOf returns the contents st keeps, nil when it keeps none.
func contentsOf(st store.Store) store.Contents {
	if h, ok := st.(store.ContentsHolder); ok {
		return h.Contents()
	}
	return nil
}

// putContent puts back a content entry of instance inst.
func putContent(ctx context.Context, st store.Store, inst, id string, e *Entry) (store.Written, error) {
	contents := contentsOf(st)
	if contents == nil || e.Body == nil {
		return store.Written{}, fmt.Errorf("file %s: this store keeps no file contents", id)
	}
	w, err := contents.Put(ctx, inst, id, e.Body, 0)
	if err != nil {
		return store.Written{}, fmt.Errorf("file %s: %w", id, err)
	}
	return w, nil
}

// loadBatch is how many records one Load call writes.
const loadBatch = 1000

func restoreInstance(ctx context.Context, st store.Store, rest string, e *Entry) error {
	inst, part, ok := strings.Cut(rest, "/")
	if !ok || inst == "" {
		return fmt.Errorf("no instance named")
	}
	if id, ok := strings.CutPrefix(part, "files/"); ok {
		_, err := putContent(ctx, st, inst, id, e)
		return err
	}
	return restorePart(ctx, st, inst, part, e.Data)
}

// restorePart puts back one entry of an instance: records or counters.
func restorePart(ctx context.Context, st store.Store, inst, part string, data []byte) error {
	switch {
	case part == "counters.json":
		var c map[string]int64
		if err := json.Unmarshal(data, &c); err != nil {
			return err
		}
		return st.AddCounters(ctx, map[string]map[string]int64{inst: c})
	case strings.HasPrefix(part, "records/"):
		batch := make([]*store.Record, 0, loadBatch)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			err := st.Load(ctx, inst, batch)
			batch = batch[:0]
			return err
		}
		err := lines(data, func(n int, line []byte) error {
			r, err := parseRecord(line)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			if batch = append(batch, r); len(batch) == loadBatch {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	}
	return fmt.Errorf("unknown entry")
}
