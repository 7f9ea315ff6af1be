package bolt

import (
	"bytes"
	"slices"

	"go.etcd.io/bbolt"
)

// A merge plan serves an OR without SORT whose every term has an index
// candidate of whole-key prefixes (an equality covering its index, or a
// reference IN ids on a single-field index) or an id list: each prefix's
// entries are in id order, so the terms' streams merge, in id order and
// without duplicates, into the candidates of the query, read only as far
// as the page needs. An access scope ("own records OR the records of these
// boards") then costs about what a plain page costs, however many records
// the scope holds.

// idStream is one source of ids in query order: the entries of an index
// under one prefix, or a sorted id list.
type idStream struct {
	c    *bbolt.Cursor
	p    []byte
	x    *indexDef
	nf   int
	list [][]byte
	id   []byte // the current id; nil when done
}

// mergeTerm is a term of the OR: an index candidate or ids.
type mergeTerm struct {
	cd  *candidate
	ids [][]byte
}

// mergeable reports whether a candidate's prefixes each cover its index,
// so that the entries under each are in id order.
func mergeable(cd *candidate) bool {
	if cd.rng != nil {
		return false
	}
	return cd.full || (len(cd.index.Fields) == 1 && len(cd.prefixes) > 0)
}

// start positions a stream at its first id in query order.
func (e *exec) startStream(s *idStream) error {
	down, near := e.walkDown(), e.near()
	if s.c == nil {
		if down {
			s.list = slices.Clone(s.list)
			slices.Reverse(s.list)
		}
		for len(s.list) > 0 && near != nil && (!down && string(s.list[0]) < near.ID || down && string(s.list[0]) > near.ID) {
			s.list = s.list[1:]
		}
		s.advanceList()
		return nil
	}
	var k []byte
	switch {
	case !down && near != nil:
		k, _ = s.c.Seek(appendEscaped(bytes.Clone(s.p), near.ID))
	case !down:
		k, _ = s.c.Seek(s.p)
	default:
		end := prefixEnd(s.p)
		if near != nil {
			end = appendEscaped(bytes.Clone(s.p), near.ID)
		}
		k = seekBefore(s.c, end)
	}
	return s.set(e, k)
}

func (s *idStream) advanceList() {
	s.id = nil
	if len(s.list) > 0 {
		s.id, s.list = s.list[0], s.list[1:]
	}
}

// set makes key k (nil: none) the stream's current entry.
func (s *idStream) set(e *exec, k []byte) error {
	s.id = nil
	if k == nil || !bytes.HasPrefix(k, s.p) {
		return nil
	}
	e.info.Keys++
	id, ok := entryID(k, s.nf)
	if !ok {
		return errCorruptKey(e.q.Type, s.x)
	}
	s.id = id
	return nil
}

// next moves the stream past its current id.
func (e *exec) nextInStream(s *idStream) error {
	if s.c == nil {
		s.advanceList()
		return nil
	}
	return s.set(e, step(s.c, e.walkDown()))
}

// merge offers the records of the terms' ids in query order, each once.
func (e *exec) merge(terms []*mergeTerm) error {
	var streams []*idStream
	for _, t := range terms {
		if t.cd == nil {
			s := &idStream{list: sortUnique(slices.Clone(t.ids))}
			if err := e.startStream(s); err != nil {
				return err
			}
			streams = append(streams, s)
			continue
		}
		for _, p := range t.cd.prefixes {
			s := &idStream{c: t.cd.bucket.Cursor(), p: p, x: t.cd.index, nf: len(t.cd.index.Fields)}
			if err := e.startStream(s); err != nil {
				return err
			}
			streams = append(streams, s)
		}
	}
	down := e.walkDown()
	var last []byte
	for {
		var best *idStream
		for _, s := range streams {
			if s.id == nil {
				continue
			}
			if best == nil || (!down && bytes.Compare(s.id, best.id) < 0) || (down && bytes.Compare(s.id, best.id) > 0) {
				best = s
			}
		}
		if best == nil {
			return e.finish(nil)
		}
		id := best.id
		if err := e.nextInStream(best); err != nil {
			return err
		}
		if last != nil && bytes.Equal(id, last) {
			continue
		}
		last = id
		r, err := e.load(id)
		if err != nil {
			return err
		}
		if r == nil {
			continue
		}
		if err := e.offer(r); err != nil {
			return e.finish(err)
		}
	}
}
