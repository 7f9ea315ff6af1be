package gql

import (
	"context"
	"errors"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// Cursors of PageInfo when there is no previous or next page. FIRST is
// also accepted as `after` (from the start) and LAST as `before` (from
// the end).
const (
	cursorFirst = "FIRST"
	cursorLast  = "LAST"
	// maxOffsets is how many page cursors nextOffsets and previousOffsets
	// list at most.
	maxOffsets = 5
)

// page is one page of a find, the source of CoreFilterConnection and of
// PageInfo. Facts beyond the page itself (is there a previous page, the
// offsets) are asked of the store only when a document selects them.
type page struct {
	c     *call
	base  store.Query // type, filter, sort, includeTrashed
	limit int
	nodes []*node
	// backward is true for last/before paging.
	backward bool
	// more: a record lies beyond the page in the direction of travel.
	more bool
	// cursorGiven: the page starts after (or ends before) a cursor or skip.
	cursorGiven bool
	// iface: a page of an interface's records (findInterface), paged
	// forward only.
	iface bool

	// before and after say whether a record lies beyond each end, once
	// known (beforeKnown, afterKnown): they may cost a store read, so
	// they are computed when first asked.
	before, after           bool
	beforeKnown, afterKnown bool
}

// pageArgs are find's paging arguments.
type pageArgs struct {
	first, last   int
	hasFirst      bool
	hasLast       bool
	after, before string
	page          int
}

// findPage runs a find for one page.
func findPage(ctx context.Context, c *call, base store.Query, a pageArgs) (*page, error) {
	cfg := c.schema.cfg
	if a.hasFirst && a.hasLast {
		return nil, errcode.New(errcode.BadRequest, "give first or last, not both")
	}
	limit := cfg.DefaultPageSize
	switch {
	case a.hasFirst:
		limit = a.first
	case a.hasLast:
		limit = a.last
	}
	if limit < 1 || limit > cfg.MaxPageSize {
		return nil, errcode.New(errcode.BadRequest, "page size %d is out of range: it must be between 1 and %d", limit, cfg.MaxPageSize)
	}
	if a.page < 0 || a.page > 1_000_000 {
		return nil, errcode.New(errcode.BadRequest, "page %d is out of range: pages count from 1", a.page)
	}
	pg := &page{c: c, base: base, limit: limit, backward: a.hasLast || (a.before != "" && a.after == "")}
	q := base
	q.Limit = limit + 1
	if a.after != "" && a.after != cursorFirst {
		q.After = a.after
	}
	if a.before != "" && a.before != cursorLast {
		q.Before = a.before
	}
	if a.page > 1 {
		q.Skip = (a.page - 1) * limit
	}
	q.Backward = pg.backward
	pg.cursorGiven = q.After != "" || q.Before != "" || q.Skip > 0
	recs, err := pg.find(ctx, &q)
	if err != nil {
		return nil, err
	}
	if len(recs) > limit {
		pg.more = true
		if pg.backward {
			recs = recs[1:]
		} else {
			recs = recs[:limit]
		}
	}
	if c.Principal.Kind != auth.InstanceAdmin {
		for i, r := range recs {
			recs[i] = shown(ctx, c, r)
		}
	}
	pg.nodes = newBatch(recs)
	return pg, nil
}

// find runs q, turning a missing cursor into a clear error.
func (pg *page) find(ctx context.Context, q *store.Query) ([]*store.Record, error) {
	recs, err := pg.c.Store.Find(ctx, pg.c.Instance.ID, q)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.BadRequest, "cursor names no record of type %s", q.Type)
	}
	if err != nil {
		return nil, storeError(err)
	}
	return recs, nil
}

// beyond returns up to n records before (backward) or after the record id,
// with their ids only.
func (pg *page) beyond(ctx context.Context, id string, backward bool, n int) ([]*store.Record, error) {
	if pg.iface {
		return nil, errcode.New(errcode.BadRequest, "find over the interface %s pages forward by endCursor: its page offsets need a record type", pg.base.Type)
	}
	q := pg.base
	q.Limit = n
	q.Backward = backward
	q.IDsOnly = true // callers want cursors
	if backward {
		q.Before = id
	} else {
		q.After = id
	}
	return pg.find(ctx, &q)
}

func (pg *page) hasPrevious(ctx context.Context) bool {
	if pg.backward {
		return pg.more
	}
	if pg.iface {
		return pg.cursorGiven // the cursor's record lies before the page
	}
	if !pg.beforeKnown {
		// Without a cursor or skip the page starts at the very beginning.
		v := pg.cursorGiven
		if v && len(pg.nodes) > 0 {
			recs, err := pg.beyond(ctx, pg.nodes[0].rec.ID, true, 1)
			v = err == nil && len(recs) > 0
		}
		pg.before, pg.beforeKnown = v, true
	}
	return pg.before
}

func (pg *page) hasNext(ctx context.Context) bool {
	if !pg.backward {
		return pg.more
	}
	if !pg.afterKnown {
		// Without a cursor or skip the page ends at the very end.
		v := pg.cursorGiven
		if v && len(pg.nodes) > 0 {
			recs, err := pg.beyond(ctx, pg.nodes[len(pg.nodes)-1].rec.ID, false, 1)
			v = err == nil && len(recs) > 0
		}
		pg.after, pg.afterKnown = v, true
	}
	return pg.after
}

func (pg *page) startCursor(ctx context.Context) string {
	if len(pg.nodes) == 0 || !pg.hasPrevious(ctx) {
		return cursorFirst
	}
	return pg.nodes[0].rec.ID
}

func (pg *page) endCursor(ctx context.Context) string {
	if len(pg.nodes) == 0 || !pg.hasNext(ctx) {
		return cursorLast
	}
	return pg.nodes[len(pg.nodes)-1].rec.ID
}

// nextOffsets returns the `after` cursors that open the next pages, up to
// maxOffsets: the first is endCursor.
func (pg *page) nextOffsets(ctx context.Context) ([]string, error) {
	out := []string{}
	if len(pg.nodes) == 0 || !pg.hasNext(ctx) {
		return out, nil
	}
	last := pg.nodes[len(pg.nodes)-1].rec.ID
	rest, err := pg.beyond(ctx, last, false, (maxOffsets-1)*pg.limit+1)
	if err != nil {
		return nil, err
	}
	out = append(out, last)
	for k := 1; k < maxOffsets && len(rest) > k*pg.limit; k++ {
		out = append(out, rest[k*pg.limit-1].ID)
	}
	return out, nil
}

// previousOffsets returns the `after` cursors that open the previous
// pages, nearest first, up to maxOffsets; a page that starts at the very
// beginning opens with FIRST.
func (pg *page) previousOffsets(ctx context.Context) ([]string, error) {
	out := []string{}
	if len(pg.nodes) == 0 || !pg.hasPrevious(ctx) {
		return out, nil
	}
	prev, err := pg.beyond(ctx, pg.nodes[0].rec.ID, true, maxOffsets*pg.limit+1)
	if err != nil {
		return nil, err
	}
	m := len(prev)
	for k := 1; k <= maxOffsets && m-(k-1)*pg.limit >= 1; k++ {
		if i := m - k*pg.limit - 1; i >= 0 {
			out = append(out, prev[i].ID)
		} else {
			out = append(out, cursorFirst)
		}
	}
	return out, nil
}
