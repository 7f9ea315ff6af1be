package gql

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/graphql-go/graphql/language/ast"
)

// document is a parsed and validated document, or the errors that make it
// unusable. It is shared by concurrent requests and never modified.
type document struct {
	ast    *ast.Document
	errors []error
	// introspects: the document selects __schema or __type (set when it
	// parses, whether it validates or not).
	introspects bool
	// ops are its compiled operations (plan.go).
	ops opCache
}

// docCache is a bounded LRU of documents by text. One cache belongs to one
// compiled schema, so a key is in effect (schema version, text).
type docCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front: most recently used; values are *docEntry
	byKey map[string]*list.Element
}

type docEntry struct {
	key string
	doc *document
}

func newDocCache(size int) *docCache {
	return &docCache{size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

// docHits and docMisses count the document caches' lookups in this
// process (DocumentCacheStats).
var docHits, docMisses atomic.Uint64

// DocumentCacheStats returns how many documents the compiled schemas'
// caches have served, and how many they had to parse, since the process
// started (metrics read them).
func DocumentCacheStats() (hits, misses uint64) { return docHits.Load(), docMisses.Load() }

// get returns the cached document for text.
func (c *docCache) get(text string) (*document, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[text]; ok {
		c.order.MoveToFront(e)
		docHits.Add(1)
		return e.Value.(*docEntry).doc, true
	}
	docMisses.Add(1)
	return nil, false
}

// put stores a document, evicting the least recently used beyond size.
func (c *docCache) put(text string, d *document) {
	if c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[text]; ok {
		e.Value.(*docEntry).doc = d
		c.order.MoveToFront(e)
		return
	}
	c.byKey[text] = c.order.PushFront(&docEntry{key: text, doc: d})
	for c.order.Len() > c.size {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.byKey, e.Value.(*docEntry).key)
	}
}

// len returns the number of cached documents.
func (c *docCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
