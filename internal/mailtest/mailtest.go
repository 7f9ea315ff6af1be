// Package mailtest runs a real SMTP server for the tests, as its own
// process: the command smtpsink (built from this module once per test
// binary), which writes each message it receives to a directory the
// test reads. Start it, point an instance's smtp setting at Host and
// Port (tls "none"), and Wait for the messages.
package mailtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var build struct {
	once sync.Once
	bin  string
	err  error
}

// binary builds smtpsink once per test binary.
func binary() (string, error) {
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "smtpsink")
		if err != nil {
			build.err = err
			return
		}
		build.bin = filepath.Join(dir, "smtpsink")
		out, err := exec.Command("go", "build", "-o", build.bin, "github.com/corehq/core/internal/mailtest/smtpsink").CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("building smtpsink: %v\n%s", err, out)
		}
	})
	return build.bin, build.err
}

// Sink is a running smtpsink.
type Sink struct {
	Host string
	Port int
	dir  string
	cmd  *exec.Cmd
}

// FreeAddr returns a loopback address no one listens on now (for a
// server that is down, then started there).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Start starts smtpsink on addr ("127.0.0.1:0": any free port); it is
// stopped when the test ends.
func Start(t testing.TB, addr string) *Sink {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	s := &Sink{dir: t.TempDir()}
	s.cmd = exec.Command(bin, "-addr", addr, "-dir", s.dir)
	s.cmd.Stderr = os.Stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("smtpsink did not start: %q, %v", line, err)
	}
	host, port, _ := net.SplitHostPort(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	go io.Copy(io.Discard, stdout)
	return s
}

// Stop stops the server (the messages stay readable).
func (s *Sink) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// Message is a delivered message.
type Message struct {
	To      string // the envelope's recipients, as written ([a@b])
	Subject string
	Text    string // the plain-text part, decoded
	HTML    string // the HTML part, decoded
}

// Messages returns every message delivered so far, in order.
func (s *Sink) Messages(t testing.TB) []Message {
	t.Helper()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	out := make([]Message, 0, len(names))
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(s.dir, n))
		if err != nil {
			t.Fatal(err)
		}
		m, err := parse(raw)
		if err != nil {
			t.Fatalf("message %s: %v", n, err)
		}
		out = append(out, m)
	}
	return out
}

// Wait polls until at least n messages have been delivered (within a
// generous minute) and returns them.
func (s *Sink) Wait(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ms := s.Messages(t)
		if len(ms) >= n {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("smtpsink: %d messages delivered, want %d", len(ms), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func parse(raw []byte) (Message, error) {
	var m Message
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return m, err
	}
	m.To = msg.Header.Get("X-Envelope-To")
	dec := new(mime.WordDecoder)
	if m.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return m, err
	}
	return m, readPart(&m, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
}

func readPart(m *Message, ctype, encoding string, body io.Reader) error {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return err
	}
	if strings.HasPrefix(mt, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := readPart(m, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
				return err
			}
		}
	}
	if strings.EqualFold(encoding, "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	switch mt {
	case "text/plain":
		m.Text = string(b)
	case "text/html":
		m.HTML = string(b)
	}
	return nil
}
