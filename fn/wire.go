package fn

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// The worker protocol: frames on the worker process's stdin (from the
// service) and stdout (to it). The service sends hello, the worker answers
// ready once it is configured. A frame is a 4-byte big-endian length,
// one byte of kind and that many bytes of payload: JSON, but for the
// frames of every call (call and done), which have a binary encoding of
// their own (half the cost of JSON per call; codec below). The service sends hello
// once, then one call at a time; while a call runs the worker may ask
// for the call's package and make core.graphql requests, and it ends
// the call with done. Frames of other calls (a reply that arrives after
// its call was stopped) are ignored. The worker stops a call at the
// deadline the call frame gives; the service kills a worker whose call
// has not answered shortly after, or whose caller went away.
const (
	frameHello   = 'h' // service → worker: workerHello
	frameReady   = 'r' // worker → service: configured, waiting for calls (no payload)
	frameCall    = 'c' // service → worker: callFrame
	framePackage = 'p' // worker → service: packageRequest; service → worker: packageFrame
	frameGraphQL = 'g' // worker → service: graphqlRequest; service → worker: graphqlReply
	frameDone    = 'd' // worker → service: doneFrame
)

// maxFrame bounds a frame: a package's files (PackagesConfig
// MaxUnpackedBytes, 16 MiB by default) in base64, with room to spare.
const maxFrame = 64 << 20

// workerHello configures a worker process.
type workerHello struct {
	Config Config `json:"config"`
}

// callFrame is one call handed to a worker.
type callFrame struct {
	App     string          `json:"app"`
	Name    string          `json:"name"`
	Version string          `json:"version"`
	SHA256  string          `json:"sha256"`
	Input   json.RawMessage `json:"input"`
	Fetch   FetchPolicy     `json:"fetch"`
	GraphQL bool            `json:"graphql"`
	// Timeout is what is left of the call's deadline.
	Timeout time.Duration `json:"timeout"`
	// Memory bounds the call's heap, in bytes.
	Memory int64 `json:"memory"`
}

// packageRequest asks for the package of the running call; the worker
// keeps the packages it was sent, by digest.
type packageRequest struct {
	SHA256 string `json:"sha256"`
}

type packageFrame struct {
	App     string            `json:"app"`
	Name    string            `json:"name"`
	Version string            `json:"version"`
	SHA256  string            `json:"sha256"`
	Main    string            `json:"main"`
	Files   map[string][]byte `json:"files"`
}

type graphqlRequest struct {
	ID        uint64         `json:"id"`
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables,omitempty"`
	// Replay, instead of a query, asks whether a webhook id is new
	// (core.verifyWebhook); the reply's Response is true or false.
	Replay *replayCheck `json:"replay,omitempty"`
}

type graphqlReply struct {
	ID       uint64          `json:"id"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// doneFrame ends a call: its result or error, and its log entries.
type doneFrame struct {
	Result   json.RawMessage `json:"result,omitempty"`
	Err      *wireError      `json:"err,omitempty"`
	Log      []LogEntry      `json:"log,omitempty"`
	Duration time.Duration   `json:"duration"`
	// Retire says the worker holds more memory than an idle worker may
	// (workerRetire): the service ends it instead of keeping it.
	Retire bool `json:"retire,omitempty"`
}

// wireError carries the typed errors of errors.go across the pipe.
type wireError struct {
	Kind    string        `json:"kind"` // function, timeout, exception, limit, memory, canceled
	Name    string        `json:"name,omitempty"`
	Version string        `json:"version,omitempty"`
	Code    string        `json:"code,omitempty"`
	Message string        `json:"message,omitempty"`
	What    string        `json:"what,omitempty"`
	Limit   int64         `json:"limit,omitempty"`
	After   time.Duration `json:"after,omitempty"`
}

func toWire(err error) *wireError {
	switch e := err.(type) {
	case nil:
		return nil
	case *FuncError:
		return &wireError{Kind: "function", Code: e.Code, Message: e.Message}
	case *TimeoutError:
		return &wireError{Kind: "timeout", Name: e.Name, Version: e.Version, After: e.After}
	case *ExceptionError:
		return &wireError{Kind: "exception", Name: e.Name, Version: e.Version, Message: e.Message}
	case *LimitError:
		return &wireError{Kind: "limit", What: e.What, Limit: int64(e.Limit)}
	case *ResourceError:
		return &wireError{Kind: "memory", Name: e.Name, Version: e.Version, Limit: e.Limit}
	}
	return &wireError{Kind: "canceled", Message: err.Error()}
}

func (w *wireError) err() error {
	switch w.Kind {
	case "function":
		return &FuncError{Code: w.Code, Message: w.Message}
	case "timeout":
		return &TimeoutError{Name: w.Name, Version: w.Version, After: w.After}
	case "exception":
		return &ExceptionError{Name: w.Name, Version: w.Version, Message: w.Message}
	case "limit":
		return &LimitError{What: w.What, Limit: int(w.Limit)}
	case "memory":
		return &ResourceError{Name: w.Name, Version: w.Version, Limit: w.Limit}
	}
	return fmt.Errorf("fn: %s", w.Message)
}

// frameWriter writes frames to one end of a pipe; safe for concurrent
// use (a call's answer and its core.graphql requests share the pipe).
type frameWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// send writes one frame of JSON.
func (fw *frameWriter) send(kind byte, v any) error {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	return fw.sendRaw(kind, body)
}

// sendRaw writes one frame of an encoded payload.
func (fw *frameWriter) sendRaw(kind byte, body []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	w := fw.w
	var head [5]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(body)))
	head[4] = kind
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Flush()
}

// readFrame reads one frame.
func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[:4])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("fn: a worker frame of %d bytes is over the bound of %d", n, maxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return head[4], body, nil
}

// The binary codec of call and done frames: strings and byte slices are
// a uvarint length and the bytes, integers varints, booleans a byte.

func (f *callFrame) encode() []byte {
	b := make([]byte, 0, 64+len(f.App)+len(f.Name)+len(f.Version)+len(f.SHA256)+len(f.Input))
	b = appendStrings(b, f.App, f.Name, f.Version, f.SHA256)
	b = appendBytes(b, f.Input)
	b = appendBool(b, f.Fetch.Enabled)
	b = binary.AppendUvarint(b, uint64(len(f.Fetch.AllowHosts)))
	b = appendStrings(b, f.Fetch.AllowHosts...)
	b = appendBool(b, f.GraphQL)
	b = binary.AppendVarint(b, int64(f.Timeout))
	return binary.AppendVarint(b, f.Memory)
}

func (f *callFrame) decode(b []byte) error {
	d := decoder{b: b}
	f.App, f.Name, f.Version, f.SHA256 = d.string(), d.string(), d.string(), d.string()
	f.Input = d.bytes()
	f.Fetch.Enabled = d.bool()
	if n := d.count(); n > 0 {
		f.Fetch.AllowHosts = make([]string, n)
		for i := range f.Fetch.AllowHosts {
			f.Fetch.AllowHosts[i] = d.string()
		}
	}
	f.GraphQL = d.bool()
	f.Timeout = time.Duration(d.varint())
	f.Memory = d.varint()
	return d.err
}

func (f *doneFrame) encode() []byte {
	b := make([]byte, 0, 32+len(f.Result))
	b = appendBytes(b, f.Result)
	b = appendBool(b, f.Err != nil)
	if e := f.Err; e != nil {
		b = appendStrings(b, e.Kind, e.Name, e.Version, e.Code, e.Message, e.What)
		b = binary.AppendVarint(b, e.Limit)
		b = binary.AppendVarint(b, int64(e.After))
	}
	b = binary.AppendUvarint(b, uint64(len(f.Log)))
	for _, l := range f.Log {
		b = binary.AppendVarint(b, l.Time.UnixNano())
		b = appendStrings(b, l.Level, l.Function, l.Call, l.Message)
	}
	b = binary.AppendVarint(b, int64(f.Duration))
	return appendBool(b, f.Retire)
}

func (f *doneFrame) decode(b []byte) error {
	d := decoder{b: b}
	f.Result = d.bytes()
	if d.bool() {
		f.Err = &wireError{Kind: d.string(), Name: d.string(), Version: d.string(), Code: d.string(), Message: d.string(), What: d.string()}
		f.Err.Limit = d.varint()
		f.Err.After = time.Duration(d.varint())
	}
	if n := d.count(); n > 0 {
		f.Log = make([]LogEntry, n)
		for i := range f.Log {
			f.Log[i].Time = time.Unix(0, d.varint()).UTC()
			f.Log[i].Level, f.Log[i].Function, f.Log[i].Call, f.Log[i].Message = d.string(), d.string(), d.string(), d.string()
		}
	}
	f.Duration = time.Duration(d.varint())
	f.Retire = d.bool()
	return d.err
}

func appendStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decoder reads what the append functions wrote; the first error sticks
// and later reads answer zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("fn: a malformed worker frame")
	}
	d.b = nil
}

func (d *decoder) count() int {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if n == 0 || n > len(d.b) {
		if n > 0 {
			d.fail()
		}
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) bool() bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}
