package oci

import (
	"fmt"
	"io"

	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
)

// RouteLibraryLogs sends the log of distribution's registry to log.
// distribution logs through logrus's standard logger, a process-wide
// global, one line per request and an "error" line for every 4xx (a
// HEAD of a blob a client is about to push answers 404 by design); the
// server's own line per request is the one that counts. So info lines
// are dropped, entries about a 5xx (and other warnings and errors not
// about a request) are kept at warn level with their error fields, and
// the 4xx ones go to debug. Request URIs, which may carry upload state
// tokens, are left out. Call it once, from main.
func RouteLibraryLogs(log *zap.Logger) {
	std := logrus.StandardLogger()
	std.SetOutput(io.Discard)
	std.SetLevel(logrus.WarnLevel)
	std.ReplaceHooks(logrus.LevelHooks{})
	std.AddHook(zapHook{log: log.Named("registry")})
}

// zapHook forwards logrus entries.
type zapHook struct{ log *zap.Logger }

func (zapHook) Levels() []logrus.Level { return logrus.AllLevels }

// kept are the entry fields forwarded.
var kept = []string{"err.code", "err.message", "err.detail", "http.response.status", "http.request.method", "error"}

func (h zapHook) Fire(e *logrus.Entry) error {
	fields := make([]zap.Field, 0, len(kept))
	for _, k := range kept {
		if v, ok := e.Data[k]; ok {
			fields = append(fields, zap.String(k, fmt.Sprint(v)))
		}
	}
	status, _ := e.Data["http.response.status"].(int)
	switch {
	case status >= 500, e.Level <= logrus.WarnLevel && status == 0:
		h.log.Warn(e.Message, fields...)
	default:
		h.log.Debug(e.Message, fields...)
	}
	return nil
}
