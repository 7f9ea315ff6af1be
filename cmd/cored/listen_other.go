//go:build !linux

package main

import (
	"context"
	"net"
)

// listen binds the TCP address; --reuse-port is refused before this on
// systems other than Linux.
func listen(ctx context.Context, addr string, _ bool) (net.Listener, error) {
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", addr)
}

// reusePortSupported says whether --reuse-port works here.
const reusePortSupported = false
