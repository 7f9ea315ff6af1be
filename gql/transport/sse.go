package transport

import (
	"bufio"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/door"
)

// GraphQL over Server-Sent Events, the protocol of the graphql-sse
// library in its distinct-connections mode: a subscription sent to
// /graphql (POST, or GET with query parameters) with Accept:
// text/event-stream answers a stream of "next" events, each with the
// subscription's data and its cursor as the event id, and a "complete"
// event when the subscription ends. A Last-Event-ID header resumes after
// that cursor. A subscription that cannot start answers a JSON error with
// its status, as a query would; one that fails later sends the error as
// a last "next" before "complete". Queries answer JSON as always.

// sseKeepAlive is how often an idle stream sends a comment, so that
// proxies and clients keep it open.
const sseKeepAlive = 12 * time.Second

// wantsEventStream reports whether a request asks for an event stream.
func wantsEventStream(r *http.Request) bool {
	for _, a := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(a, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// serveSSE runs the subscription req as an event stream.
func (h *Handler) serveSSE(c echo.Context, env gql.Env, req gql.Request) error {
	r := c.Request()
	ctx := door.StreamContext(r)
	release, err := h.engine.Subscriptions().Connect(env)
	if err != nil {
		return door.WriteError(c, err)
	}
	defer release()
	st, res := h.engine.Subscribe(ctx, env, req, r.Header.Get("Last-Event-ID"))
	if res != nil {
		return door.WriteResult(c, res)
	}
	defer st.Close()
	w := c.Response()
	// The stream outlives the server's read and write time-outs, which
	// bound requests that answer at once.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	hd := w.Header()
	hd.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	flush := func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	// The headers go at once: a client that sees them knows the
	// subscription reads the feed from here on.
	if err := flush(); err != nil {
		return nil
	}
	tick := time.NewTicker(sseKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil // the client went away (the server's shutdown ends the stream: Engine.CloseStreams)
		case <-tick.C:
			bw.WriteString(":\n\n")
		case ev, ok := <-st.Events():
			if !ok {
				if err := st.Err(); err != nil {
					_, body := errcode.Body(err)
					if b, jerr := (&gql.Result{Errors: body.Errors}).MarshalJSON(); jerr == nil {
						writeSSE(bw, "next", "", b)
					}
				}
				writeSSE(bw, "complete", "", nil)
				flush()
				return nil
			}
			writeSSE(bw, "next", ev.Cursor, ev.Payload())
		}
		if err := flush(); err != nil {
			return nil // the client went away
		}
	}
}

// writeSSE writes one event (data is one line of JSON, or none).
func writeSSE(w *bufio.Writer, event, id string, data []byte) {
	if id != "" {
		w.WriteString("id: ")
		w.WriteString(id)
		w.WriteByte('\n')
	}
	w.WriteString("event: ")
	w.WriteString(event)
	w.WriteString("\ndata: ")
	w.Write(data)
	w.WriteString("\n\n")
}

// isWebSocket reports whether a request asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}
