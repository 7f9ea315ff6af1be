package oci

import (
	"fmt"
	"io"

	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
)

// RouteLibraryLogs sends the log of distribution's storage to log.
// distribution logs through logrus's standard logger, a process-wide
// global: debug and info lines of storage calls, a few warnings (a blob
// read through its sha512 link) and errors. The server's own line per
// request is the one that counts: only warnings and errors are kept, at
// warn level, with their error. Call it once, from main.
func RouteLibraryLogs(log *zap.Logger) {
	std := logrus.StandardLogger()
	std.SetOutput(io.Discard)
	std.SetLevel(logrus.WarnLevel)
	std.ReplaceHooks(logrus.LevelHooks{})
	std.AddHook(zapHook{log: log.Named("registry")})
}

// zapHook forwards logrus entries (the levels enabled: warnings and
// worse) with their error field, never other fields (paths, requests).
type zapHook struct{ log *zap.Logger }

func (zapHook) Levels() []logrus.Level { return logrus.AllLevels }

func (h zapHook) Fire(e *logrus.Entry) error {
	var fields []zap.Field
	if v, ok := e.Data[logrus.ErrorKey]; ok {
		fields = append(fields, zap.String("error", fmt.Sprint(v)))
	}
	h.log.Warn(e.Message, fields...)
	return nil
}
