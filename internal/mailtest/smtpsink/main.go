// Command smtpsink is the mail server the tests send to: an SMTP server
// (github.com/emersion/go-smtp) on -addr that accepts every message and
// writes each one, as received, to a file of its own in -dir. It prints
// "ready" once it listens.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "where to listen")
	dir := flag.String("dir", "", "where to write each message")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{dir: *dir}, nil
	}))
	s.Domain = "smtpsink.test"
	s.ReadTimeout, s.WriteTimeout = time.Minute, time.Minute
	s.MaxMessageBytes = 10 << 20
	fmt.Println("ready", ln.Addr())
	log.Fatal(s.Serve(ln))
}

var seq atomic.Int64

type session struct {
	dir  string
	from string
	to   []string
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

// Data writes the message (after a first line naming the envelope's
// recipients) to a temporary name, then renames it: a reader sees whole
// messages only.
func (s *session) Data(r io.Reader) error {
	body, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%d-%d.eml", time.Now().UnixNano(), seq.Add(1))
	tmp := filepath.Join(s.dir, "."+name)
	head := fmt.Sprintf("X-Envelope-To: %v\r\n", s.to)
	if err := os.WriteFile(tmp, append([]byte(head), body...), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, name))
}
