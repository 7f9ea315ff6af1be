// Package transport is the /graphql door: GraphQL over HTTP (POST and
// GET, handler.go), over Server-Sent Events (sse.go) and over WebSocket in
// both subprotocols, graphql-transport-ws and the legacy graphql-ws
// (websocket.go), for the instance a request's core-domain names.
//
// It decides how a request travels, never what it means: it reads a
// request (a body, query parameters, a protocol message), asks the engine
// (gql.Engine) to open, admit and run it, and writes the answer in the
// transport's framing. What it needs of the engine is exported there:
// Engine.Instances and Engine.Open (a WebSocket's connection_init, as
// door.Resolve opens an HTTP request), Engine.Admit (each operation of a
// WebSocket counts as a request), Engine.Subscriptions (a connection's
// count against the instance's bounds, the end of every stream at
// shutdown), Engine.Subscribe and Engine.Run, and what a document's
// operation is (gql.IsSubscription, gql.IsMutation, Env.Rejects). Like
// the other doors it imports neither the store nor another door
// (internal/archtest checks it).
package transport
