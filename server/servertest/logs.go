package servertest

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Every test server of a test binary also logs, at debug level, into one
// process-wide capture; every secret a test sends or receives through Env
// is noted. CheckLogs then proves that no secret reached any log line of
// the whole run.
var capture struct {
	mu      sync.Mutex
	log     bytes.Buffer
	secrets map[string]bool
}

type captureWriter struct{}

func (captureWriter) Write(p []byte) (int, error) {
	capture.mu.Lock()
	defer capture.mu.Unlock()
	return capture.log.Write(p)
}

func (captureWriter) Sync() error { return nil }

// capturing returns l teed into the process-wide capture.
func capturing(l *zap.Logger) *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	c := zapcore.NewCore(enc, captureWriter{}, zapcore.DebugLevel)
	return zap.New(zapcore.NewTee(l.Core(), c))
}

// noteSecret remembers a value that must never be logged.
func noteSecret(s string) {
	if len(s) < 8 {
		return
	}
	capture.mu.Lock()
	defer capture.mu.Unlock()
	if capture.secrets == nil {
		capture.secrets = map[string]bool{}
	}
	capture.secrets[s] = true
}

// noteSecrets walks a decoded JSON value and notes the values of keys
// that hold secrets.
func noteSecrets(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "token", "sessionToken", "password", "secret":
				if s, ok := e.(string); ok {
					noteSecret(s)
				}
				if pw, ok := e.(map[string]any); ok && k == "password" {
					if s, ok := pw["value"].(string); ok {
						noteSecret(s)
					}
				}
			}
			noteSecrets(e)
		}
	case []any:
		for _, e := range v {
			noteSecrets(e)
		}
	}
}

// Leaks returns the secrets, and the shapes of secrets (session tokens,
// password hashes), that occur in a log.
func Leaks(log []byte, secrets map[string]bool) []string {
	var out []string
	for s := range secrets {
		if bytes.Contains(log, []byte(s)) {
			out = append(out, s)
		}
	}
	for _, shape := range []string{"cs1.", "cs2.", "$argon2id$"} {
		if bytes.Contains(log, []byte(shape)) {
			out = append(out, "a value shaped like "+shape+"…")
		}
	}
	sort.Strings(out)
	return out
}

// MainCheckingLogs runs a test binary's tests, then fails the run when any
// log line of any test server holds a secret. Call it from TestMain.
func MainCheckingLogs(m *testing.M) {
	code := runOnStores(m) // once per store kind (stores.go)
	capture.mu.Lock()
	leaks := Leaks(capture.log.Bytes(), capture.secrets)
	lines, secrets := strings.Count(capture.log.String(), "\n"), len(capture.secrets)
	capture.mu.Unlock()
	if len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "servertest: secrets reached the logs: %q\n", leaks)
		code = 1
	} else if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "servertest: %d log lines checked for %d secrets: none found\n", lines, secrets)
	}
	os.Exit(code)
}
