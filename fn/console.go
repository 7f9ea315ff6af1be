package fn

import (
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// consoleState is what a call's console kept.
type consoleState struct {
	entries []LogEntry
	bytes   int
	dropped int
}

// newConsole returns the call's console: log, info, debug, warn, error
// and trace write entries to the call's function log (bounded by
// Config.MaxConsoleBytes and MaxLineBytes), never to the service's
// output.
func (c *call) newConsole() *goja.Object {
	obj := c.vm.NewObject()
	for _, level := range []string{"log", "info", "debug", "warn", "error", "trace"} {
		must(obj.Set(level, func(fc goja.FunctionCall) goja.Value {
			c.print(level, fc.Arguments)
			return goja.Undefined()
		}))
	}
	return obj
}

// print formats a console line and keeps it while the call's output is
// under its bound.
func (c *call) print(level string, args []goja.Value) {
	cfg := &c.j.cfg
	if c.console.bytes >= cfg.MaxConsoleBytes {
		c.console.dropped++
		return
	}
	line := cut(c.format(args, cfg.MaxLineBytes), cfg.MaxLineBytes)
	if c.console.bytes+len(line) > cfg.MaxConsoleBytes {
		c.console.dropped++
		c.console.bytes = cfg.MaxConsoleBytes
		return
	}
	c.console.bytes += len(line)
	c.console.entries = append(c.console.entries, c.entry(level, line))
}

// format renders console arguments the way Node does for the common
// cases: a first string argument may hold %s %d %i %f %j %o %O %c %%;
// the rest are appended, strings as they are, errors with their stack,
// other objects as JSON. It stops early once limit bytes are written.
func (c *call) format(args []goja.Value, limit int) string {
	var b strings.Builder
	rest := args
	if len(args) > 0 {
		if s, ok := args[0].Export().(string); ok && strings.IndexByte(s, '%') >= 0 {
			rest = args[1:]
			for i := 0; i < len(s) && b.Len() <= limit; i++ {
				if s[i] != '%' || i+1 == len(s) {
					b.WriteByte(s[i])
					continue
				}
				verb := s[i+1]
				if verb == '%' {
					b.WriteByte('%')
					i++
					continue
				}
				if !strings.ContainsRune("sdifjoOc", rune(verb)) || len(rest) == 0 {
					b.WriteByte('%')
					continue
				}
				arg := rest[0]
				rest = rest[1:]
				i++
				switch verb {
				case 'd', 'i':
					n := arg.ToFloat()
					if verb == 'i' {
						n = float64(int64(n))
					}
					b.WriteString(strconv.FormatFloat(n, 'f', -1, 64))
				case 'f':
					b.WriteString(strconv.FormatFloat(arg.ToFloat(), 'f', -1, 64))
				case 'c': // CSS: dropped
				case 's':
					if _, isObj := arg.(*goja.Object); !isObj {
						b.WriteString(arg.String())
						continue
					}
					b.WriteString(c.show(arg))
				default:
					b.WriteString(c.show(arg))
				}
			}
		}
	}
	for _, a := range rest {
		if b.Len() > limit {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.show(a))
	}
	return b.String()
}

// show renders one value: strings as they are, errors with their stack,
// functions by name, other objects as JSON (their string form when they
// cannot be encoded).
func (c *call) show(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok {
		return v.String()
	}
	if _, isFn := goja.AssertFunction(obj); isFn {
		return "[Function: " + obj.Get("name").String() + "]"
	}
	if st := obj.Get("stack"); !isNullish(st) && obj.Get("message") != nil {
		return st.String()
	}
	if s, err := c.stringify(obj); err == nil {
		return s
	}
	return obj.String()
}
