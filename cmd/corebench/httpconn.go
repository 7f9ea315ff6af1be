package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection of the load generator. It
// writes requests the caller built byte for byte and reads just enough of
// each response (status, Content-Length or chunked body, Connection:
// close) to hand back the status and the body, allocating nothing per
// request once warm. That keeps the load generator's CPU small next to the
// server's, which is the point of a load generator (wrk's design; net/http's
// client costs several times more per request). Not safe for concurrent
// use.
type conn struct {
	addr    string // host:port
	timeout time.Duration
	nc      net.Conn
	br      *bufio.Reader
}

func newConn(addr string, timeout time.Duration) *conn {
	return &conn{addr: addr, timeout: timeout}
}

// errMalformed is a response the reader does not understand.
var errMalformed = errors.New("malformed HTTP response")

// dial opens the connection if it is not open.
func (c *conn) dial() error {
	if c.nc != nil {
		return nil
	}
	nc, err := net.DialTimeout("tcp", c.addr, c.timeout)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true) // the default already; an error here changes nothing
	}
	c.nc = nc
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 32<<10)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

// close closes the connection; the next request opens a new one.
func (c *conn) close() {
	if c.nc != nil {
		_ = c.nc.Close() // nothing to do about a failed close
		c.nc = nil
	}
}

// roundTrip sends req (a complete HTTP/1.1 request) and reads the
// response. The body is appended to buf[:0] and returned. On any error the
// connection is closed (and reopened by the next call).
func (c *conn) roundTrip(req, buf []byte) (status int, body []byte, err error) {
	if err := c.dial(); err != nil {
		return 0, buf[:0], err
	}
	if c.timeout > 0 {
		_ = c.nc.SetDeadline(time.Now().Add(c.timeout)) // fails only on a closed conn, which Write reports
	}
	if _, err := c.nc.Write(req); err != nil {
		c.close()
		return 0, buf[:0], err
	}
	status, body, keep, err := readResponse(c.br, buf[:0])
	if err != nil || !keep {
		c.close()
	}
	return status, body, err
}

// readResponse reads one response from br, appending its body to body.
// keep is false when the server closes the connection after it.
func readResponse(br *bufio.Reader, body []byte) (status int, out []byte, keep bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, body, false, err
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, body, false, fmt.Errorf("%w: status line %q", errMalformed, trimCRLF(line))
	}
	status, err = atoiBytes(line[9:12])
	if err != nil {
		return 0, body, false, fmt.Errorf("%w: status line %q", errMalformed, trimCRLF(line))
	}
	keep = line[7] == '1' // HTTP/1.0 closes unless told otherwise; close enough for a load test
	length, chunked := -1, false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return status, body, false, err
		}
		h := trimCRLF(line)
		if len(h) == 0 {
			break
		}
		colon := bytes.IndexByte(h, ':')
		if colon <= 0 {
			return status, body, false, fmt.Errorf("%w: header line %q", errMalformed, h)
		}
		name, value := h[:colon], bytes.TrimSpace(h[colon+1:])
		switch {
		case asciiEqualFold(name, "content-length"):
			if length, err = atoiBytes(value); err != nil {
				return status, body, false, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "connection"):
			if asciiEqualFold(value, "close") {
				keep = false
			}
		}
	}
	switch {
	case status == 204 || status == 304 || status < 200:
		return status, body, keep, nil
	case chunked:
		body, err = readChunked(br, body)
		return status, body, keep && err == nil, err
	case length >= 0:
		body, err = readN(br, body, length)
		return status, body, keep && err == nil, err
	default: // the body ends when the connection does
		for {
			body, err = readN(br, body, 4096)
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return status, body, false, nil
			}
			if err != nil {
				return status, body, false, err
			}
		}
	}
}

// readChunked reads a chunked body (RFC 9112 §7.1), trailers skipped.
func readChunked(br *bufio.Reader, body []byte) ([]byte, error) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return body, err
		}
		size := trimCRLF(line)
		if i := bytes.IndexByte(size, ';'); i >= 0 {
			size = size[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 32)
		if err != nil || n < 0 {
			return body, fmt.Errorf("%w: chunk size %q", errMalformed, size)
		}
		if n == 0 {
			for { // trailers, then the empty line
				line, err := br.ReadSlice('\n')
				if err != nil {
					return body, err
				}
				if len(trimCRLF(line)) == 0 {
					return body, nil
				}
			}
		}
		if body, err = readN(br, body, int(n)); err != nil {
			return body, err
		}
		line, err = br.ReadSlice('\n')
		if err != nil {
			return body, err
		}
		if len(trimCRLF(line)) != 0 {
			return body, fmt.Errorf("%w: no CRLF after a chunk", errMalformed)
		}
	}
}

// readN appends exactly n bytes of br to body (fewer, with the error, at
// the end of the stream).
func readN(br *bufio.Reader, body []byte, n int) ([]byte, error) {
	start := len(body)
	body = grow(body, n)
	got, err := io.ReadFull(br, body[start:start+n])
	return body[:start+got], err
}

// grow returns b with room for n more bytes beyond len(b), its length
// extended by n.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func trimCRLF(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// atoiBytes parses a non-negative decimal number.
func atoiBytes(b []byte) (int, error) {
	if len(b) == 0 || len(b) > 18 {
		return 0, errMalformed
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errMalformed
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// asciiEqualFold compares b with the lower-case ASCII string s, ignoring
// case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
