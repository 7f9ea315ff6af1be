package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/gql/jsonvalue"
	"github.com/corehq/core/tenant"
)

// GraphQL over WebSocket on GET /graphql, in two subprotocols:
//
//   - graphql-transport-ws, the protocol of the graphql-ws library
//     (Apollo Client, urql, Relay): connection_init / connection_ack,
//     subscribe / next / error / complete, ping / pong, and its close
//     codes: 4400 an invalid message, 4401 a subscribe before the ack,
//     4403 a refused connection_init (unknown instance, refused token),
//     4408 no connection_init in time, 4409 an id already in use, 4429 a
//     second connection_init.
//   - graphql-ws, the legacy protocol of subscriptions-transport-ws:
//     connection_init / connection_ack (and keep-alive ka), start / data /
//     error / complete, stop, connection_terminate; a refused
//     connection_init answers connection_error and closes.
//
// core-domain and authorization come from the connection_init payload
// (keys "core-domain" and "authorization") or, where it has none, from
// the upgrade request's headers; the connection opens the instance and
// the caller once, as a request to /graphql does. Each subscription is a
// gql.Stream (Engine.Subscribe); queries and mutations sent on the
// connection run once and complete. A connection's messages are handled
// in order: a subscription has its starting point in the feed before the
// next message is read, so the answer to a query sent after a subscribe
// tells a client that writes from then on reach it. A connection runs at
// most gql.Config.MaxSubscriptions subscriptions; one whose client reads
// too slowly (a subscription's queue full) is closed with 1008 and a
// reason saying so; a connection_init past the instance's
// subscriptionConnections, or past its caller's share of them
// (subscriptionConnectionsPerAccount), closes with 1013 (try again
// later). The tokens are sent in the protocol, never as cookies, so the
// connection needs no check of its Origin: a page elsewhere cannot borrow
// a session.

// The subprotocols.
const (
	protoTransportWS = "graphql-transport-ws"
	protoLegacyWS    = "graphql-ws"
)

// The protocol's bounds and intervals.
const (
	// wsInitTimeout is how long a connection may wait before its
	// connection_init (graphql-ws's default).
	wsInitTimeout = 3 * time.Second
	// wsWriteTimeout bounds one message's write: a client that takes
	// longer is gone.
	wsWriteTimeout = 10 * time.Second
	// wsKeepAlive is how often the legacy protocol sends ka.
	wsKeepAlive = 12 * time.Second
	// wsReadLimit bounds one message from the client: a document and its
	// variables.
	wsReadLimit = 1 << 20
)

// The close codes of graphql-transport-ws.
const (
	closeBadRequest         websocket.StatusCode = 4400
	closeUnauthorized       websocket.StatusCode = 4401
	closeForbidden          websocket.StatusCode = 4403
	closeSubprotocol        websocket.StatusCode = 4406
	closeInitTimeout        websocket.StatusCode = 4408
	closeSubscriberExists   websocket.StatusCode = 4409
	closeTooManyInitialised websocket.StatusCode = 4429
)

// wsMessage is one message of either protocol.
type wsMessage struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	Payload any    `json:"payload,omitempty"`
}

// wsConn is one WebSocket connection.
type wsConn struct {
	h      *Handler
	conn   *websocket.Conn
	legacy bool
	c      echo.Context
	ctx    context.Context
	cancel context.CancelFunc

	mu  sync.Mutex
	env *gql.Env // set by connection_init
	// release ends the connection's count against the instance's
	// subscriptionConnections (set with env).
	release func()
	inits   int
	subs    map[string]*gql.Stream
	wg      sync.WaitGroup
}

// serveWebSocket runs a WebSocket connection until either side closes it.
func (h *Handler) serveWebSocket(c echo.Context) error {
	conn, err := websocket.Accept(c.Response(), c.Request(), &websocket.AcceptOptions{
		Subprotocols:       []string{protoTransportWS, protoLegacyWS},
		InsecureSkipVerify: true, // see the package comment above: no ambient credentials
	})
	if err != nil {
		return nil // Accept answered the request
	}
	defer conn.CloseNow()
	proto := conn.Subprotocol()
	if proto != protoTransportWS && proto != protoLegacyWS {
		conn.Close(closeSubprotocol, "Subprotocol not acceptable: use graphql-transport-ws or graphql-ws")
		return nil
	}
	conn.SetReadLimit(wsReadLimit)
	// The request's context ends with the handler; the connection's is
	// its own.
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.Request().Context()))
	w := &wsConn{h: h, conn: conn, legacy: proto == protoLegacyWS, c: c, ctx: ctx, cancel: cancel, subs: map[string]*gql.Stream{}}
	defer w.stop()
	defer h.engine.Subscriptions().AfterClose(func() {
		w.close(websocket.StatusGoingAway, "the server is shutting down")
	})()
	init := time.AfterFunc(wsInitTimeout, func() {
		w.mu.Lock()
		late := w.env == nil
		w.mu.Unlock()
		if late {
			w.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	defer init.Stop()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return nil
		}
		if !w.handle(data) {
			return nil
		}
	}
}

// stop ends the connection's subscriptions and waits for them.
func (w *wsConn) stop() {
	w.cancel()
	w.mu.Lock()
	subs := w.subs
	w.subs = map[string]*gql.Stream{}
	w.mu.Unlock()
	for _, st := range subs {
		st.Close()
	}
	w.wg.Wait()
	w.mu.Lock()
	release := w.release
	w.mu.Unlock()
	if release != nil {
		release()
	}
}

// close closes the connection with a code and reason (at most 123
// bytes, as the WebSocket protocol allows), waiting a moment for the
// client's reply; never call it under w.mu.
func (w *wsConn) close(code websocket.StatusCode, reason string) {
	if len(reason) > 123 {
		reason = reason[:120] + "..."
	}
	w.conn.Close(code, reason)
	w.cancel()
}

// send writes one message; false when the connection has failed.
func (w *wsConn) send(m wsMessage) bool {
	b, err := json.Marshal(m)
	if err != nil {
		w.h.engine.Log().Error("unencodable subscription message")
		w.close(websocket.StatusInternalError, "internal error")
		return false
	}
	return w.write(b)
}

// write writes one encoded message; false when the connection has failed.
func (w *wsConn) write(b []byte) bool {
	ctx, cancel := context.WithTimeout(w.ctx, wsWriteTimeout)
	defer cancel()
	if err := w.conn.Write(ctx, websocket.MessageText, b); err != nil {
		w.cancel()
		return false
	}
	return true
}

// sendEvent writes a subscription's event: the message is put together
// around the event's encoded payload, which the subscriptions sharing the
// event share (json.Marshal would check and copy it again for each).
func (w *wsConn) sendEvent(id string, ev gql.Event, buf []byte) ([]byte, bool) {
	quoted, err := json.Marshal(id)
	if err != nil {
		return buf, false
	}
	buf = append(buf[:0], `{"id":`...)
	buf = append(buf, quoted...)
	buf = append(buf, `,"type":"`...)
	buf = append(buf, w.nextType()...)
	buf = append(buf, `","payload":`...)
	buf = append(buf, ev.Payload()...)
	buf = append(buf, '}')
	return buf, w.write(buf)
}

// handle acts on one message from the client; false ends the connection.
func (w *wsConn) handle(data []byte) bool {
	x, err := jsonvalue.Decode(data, maxJSONDepth)
	m, ok := x.(map[string]any)
	typ, _ := m["type"].(string)
	if err != nil || !ok || typ == "" {
		w.close(closeBadRequest, "Invalid message received: a JSON object with a type")
		return false
	}
	id, _ := m["id"].(string)
	switch {
	case typ == "connection_init":
		return w.init(m["payload"])
	case typ == "ping" && !w.legacy:
		return w.send(wsMessage{Type: "pong", Payload: m["payload"]})
	case typ == "pong" && !w.legacy:
		return true
	case typ == "connection_terminate" && w.legacy:
		w.close(websocket.StatusNormalClosure, "")
		return false
	case (typ == "subscribe" && !w.legacy) || (typ == "start" && w.legacy):
		if id == "" {
			w.close(closeBadRequest, "Invalid message received: "+typ+" needs an id")
			return false
		}
		return w.subscribe(id, m["payload"])
	case (typ == "complete" && !w.legacy) || (typ == "stop" && w.legacy):
		w.mu.Lock()
		st := w.subs[id]
		delete(w.subs, id)
		w.mu.Unlock()
		if st != nil {
			st.Close()
			if w.legacy {
				return w.send(wsMessage{ID: id, Type: "complete"})
			}
		}
		return true
	}
	w.close(closeBadRequest, "Invalid message received: unknown type "+typ)
	return false
}

// init opens the instance and the caller of connection_init.
func (w *wsConn) init(payload any) bool {
	w.mu.Lock()
	w.inits++
	again := w.inits > 1
	w.mu.Unlock()
	if again {
		if w.legacy {
			return true // subscriptions-transport-ws ignores it
		}
		w.close(closeTooManyInitialised, "Too many initialisation requests")
		return false
	}
	p, _ := payload.(map[string]any)
	req := w.c.Request()
	domain, _ := p[tenant.Header].(string)
	if domain == "" {
		domain = req.Header.Get(tenant.Header)
	}
	authorization, _ := p["authorization"].(string)
	if authorization == "" {
		authorization = req.Header.Get("authorization")
	}
	env, err := w.open(domain, authorization)
	if err != nil {
		msg := "Forbidden: " + errcode.As(err).Message
		if w.legacy {
			w.send(wsMessage{Type: "connection_error", Payload: map[string]any{"message": errcode.As(err).Message}})
		}
		w.close(closeForbidden, msg)
		return false
	}
	release, err := w.h.engine.Subscriptions().Connect(env)
	if err != nil {
		if w.legacy {
			w.send(wsMessage{Type: "connection_error", Payload: map[string]any{"message": errcode.As(err).Message}})
		}
		w.close(websocket.StatusTryAgainLater, errcode.As(err).Message)
		return false
	}
	w.mu.Lock()
	w.env, w.release = &env, release
	w.mu.Unlock()
	if !w.send(wsMessage{Type: "connection_ack"}) {
		return false
	}
	if w.legacy {
		if !w.send(wsMessage{Type: "ka"}) {
			return false
		}
		w.wg.Add(1)
		go w.keepAlive()
	}
	return true
}

// open resolves the connection's instance and caller as door.Resolve
// does a request's; a refused token fails here (a connection does not
// log in).
func (w *wsConn) open(domain, authorization string) (gql.Env, error) {
	if domain == "" {
		return gql.Env{}, errcode.New(errcode.BadRequest, "core-domain is required (connection_init payload or header)")
	}
	inst, err := w.h.engine.Instances().Resolve([]string{domain})
	if err != nil {
		return gql.Env{}, err
	}
	env, err := w.h.engine.Open(w.ctx, inst, authorization, w.c.RealIP())
	if err != nil {
		return gql.Env{}, err
	}
	if err := env.Unauthenticated(); err != nil {
		return gql.Env{}, err
	}
	return env, nil
}

// keepAlive sends the legacy protocol's ka until the connection ends.
func (w *wsConn) keepAlive() {
	defer w.wg.Done()
	t := time.NewTicker(wsKeepAlive)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
			if !w.send(wsMessage{Type: "ka"}) {
				return
			}
		}
	}
}

// subscribe starts the operation of a subscribe (start) message.
func (w *wsConn) subscribe(id string, payload any) bool {
	w.mu.Lock()
	env, running, n := w.env, w.subs[id] != nil, len(w.subs)
	w.mu.Unlock()
	if env == nil {
		if w.legacy {
			return w.sendErrors(id, []errcode.Item{errcode.New(errcode.Unauthenticated, "connection_init first").Item()})
		}
		w.close(closeUnauthorized, "Unauthorized")
		return false
	}
	if running {
		if w.legacy {
			return w.sendErrors(id, []errcode.Item{errcode.New(errcode.BadRequest, "an operation with id %s is running", id).Item()})
		}
		w.close(closeSubscriberExists, fmt.Sprintf("Subscriber for %s already exists", id))
		return false
	}
	p, ok := payload.(map[string]any)
	if !ok {
		w.close(closeBadRequest, "Invalid message received: the payload must be an object")
		return false
	}
	req, err := requestOf(p)
	if err == nil && req.Query == "" {
		err = errcode.New(errcode.BadRequest, "query is required")
	}
	if err != nil {
		return w.sendErrors(id, []errcode.Item{errcode.As(err).Item()})
	}
	// Each operation counts as a request against the rate limit, as it
	// would over HTTP.
	if err := w.h.engine.Admit(*env); err != nil {
		return w.sendErrors(id, []errcode.Item{errcode.As(err).Item()})
	}
	if env.Rejects(req) {
		// Run answers it as it answers HTTP: introspection refused to
		// whom the instance does not allow it, the schema hidden in the
		// errors of those callers.
		res := w.h.engine.Run(w.ctx, *env, req)
		defer res.Release()
		return w.sendErrors(id, res.Errors)
	}
	if !gql.IsSubscription(env.Schema, req) {
		// A query or mutation: its answer, then complete.
		res := w.h.engine.Run(w.ctx, *env, req)
		defer res.Release()
		return w.send(wsMessage{ID: id, Type: w.nextType(), Payload: res}) && w.send(wsMessage{ID: id, Type: "complete"})
	}
	if max := w.h.engine.Subscriptions().PerConnection(); n >= max {
		return w.sendErrors(id, []errcode.Item{errcode.New(errcode.SubscriptionLimit,
			"this connection runs %d subscriptions, the most it may: complete one first", max).Item()})
	}
	st, res := w.h.engine.Subscribe(w.ctx, *env, req, "")
	if res != nil {
		return w.sendErrors(id, res.Errors)
	}
	w.mu.Lock()
	w.subs[id] = st
	w.mu.Unlock()
	w.wg.Add(1)
	go w.forward(id, st)
	return true
}

// nextType is the type of a result message.
func (w *wsConn) nextType() string {
	if w.legacy {
		return "data"
	}
	return "next"
}

// sendErrors ends an operation with its errors: graphql-transport-ws
// sends the list, the legacy protocol the first.
func (w *wsConn) sendErrors(id string, items []errcode.Item) bool {
	if w.legacy {
		var first any
		if len(items) > 0 {
			first = items[0]
		}
		return w.send(wsMessage{ID: id, Type: "error", Payload: first})
	}
	return w.send(wsMessage{ID: id, Type: "error", Payload: items})
}

// forward sends a subscription's events until it ends.
func (w *wsConn) forward(id string, st *gql.Stream) {
	defer w.wg.Done()
	var buf []byte
	for ev := range st.Events() {
		var ok bool
		if buf, ok = w.sendEvent(id, ev, buf); !ok {
			st.Close()
			return
		}
	}
	w.mu.Lock()
	mine := w.subs[id] == st
	if mine {
		delete(w.subs, id)
	}
	w.mu.Unlock()
	err := st.Err()
	if err == nil || !mine {
		return // completed by the client, or the connection ends
	}
	if e := errcode.As(err); errors.As(err, new(*errcode.Error)) && e.Code == errcode.SubscriptionLimit {
		// The client reads too slowly: the whole connection lags.
		w.close(websocket.StatusPolicyViolation, "slow consumer: "+e.Message)
		return
	}
	w.sendErrors(id, []errcode.Item{errcode.As(err).Item()})
}
