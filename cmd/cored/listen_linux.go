package main

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listen binds the TCP address; with reusePort it sets SO_REUSEPORT first,
// so that several cored processes on one machine bind the same port and
// the kernel spreads new connections among them.
func listen(ctx context.Context, addr string, reusePort bool) (net.Listener, error) {
	var lc net.ListenConfig
	if reusePort {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	return lc.Listen(ctx, "tcp", addr)
}

// reusePortSupported says whether --reuse-port works here.
const reusePortSupported = true
