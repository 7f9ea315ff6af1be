package fn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// GatewayConfig configures the container engine of non-JavaScript
// function images: an HTTP function gateway such as OpenFaaS's, or
// Knative services.
type GatewayConfig struct {
	// URL is where a function version is called, with {app}, {name} and
	// {version} replaced by the version's names made DNS-safe (lower
	// case; anything but letters, digits and '-' becomes '-'):
	//
	//	OpenFaaS: http://gateway.openfaas:8080/function/{app}-{name}-{version}
	//	Knative:  http://{app}-{name}-{version}.functions.svc.cluster.local
	//
	// Credentials in the URL (https://user:password@host/…) are sent as
	// HTTP basic auth. Empty: no engine (the default).
	URL string
	// Timeout bounds one call, cold start included.
	Timeout time.Duration
	// MaxInputBytes and MaxResultBytes bound the request and response
	// bodies.
	MaxInputBytes  int
	MaxResultBytes int
}

// DefaultGatewayConfig returns no URL (no engine), 30 s per call and
// 1 MiB bodies.
func DefaultGatewayConfig() GatewayConfig {
	return GatewayConfig{Timeout: 30 * time.Second, MaxInputBytes: 1 << 20, MaxResultBytes: 1 << 20}
}

// Gateway is the Runtime of container images: it POSTs each call to
// the function's URL at the gateway, which runs the image (deploying it
// there is the operator's part: the image is in this registry as
// {host}/{app}/{name}:{version}).
//
// The request body is the input a JavaScript function gets, as JSON:
// {"args": {…}, "env": {…}, "core": {account_id, instance_id, domain,
// token}}, with the headers X-Core-App, X-Core-Function, X-Core-Version
// and X-Core-Call. A 2xx answer's body is the result (JSON; empty is
// null). Another answer whose body is {"code", "message"} is the
// function's own error; any other failure is reported as the function
// having failed, with the details in the instance's function log.
// core.graphql is not available to container functions (they may call
// the instance's API over HTTP with input.core.token).
type Gateway struct {
	cfg    GatewayConfig
	client *http.Client
	logs   LogSink
}

var _ Runtime = (*Gateway)(nil)

// NewGateway returns the gateway runtime, writing notes about failed
// calls to logs (nil drops them).
func NewGateway(cfg GatewayConfig, logs LogSink) (*Gateway, error) {
	u, err := url.Parse(strings.NewReplacer("{app}", "app", "{name}", "name", "{version}", "version").Replace(cfg.URL))
	switch {
	case cfg.URL == "":
		return nil, errors.New("fn: the function gateway needs a URL")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("fn: the function gateway URL must be an http or https URL (with {app}, {name} and {version} where the function goes)")
	case cfg.Timeout <= 0 || cfg.MaxInputBytes <= 0 || cfg.MaxResultBytes <= 0:
		return nil, errors.New("fn: the function gateway needs a positive Timeout, MaxInputBytes and MaxResultBytes")
	}
	return &Gateway{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}, logs: logs}, nil
}

// Invoke runs one call at the gateway.
func (g *Gateway) Invoke(ctx context.Context, inv Invocation) (Result, error) {
	start := time.Now()
	call := store.NewID()
	in := struct {
		Args map[string]any    `json:"args"`
		Env  map[string]string `json:"env"`
		Core Caller            `json:"core"`
	}{Args: inv.Args, Env: map[string]string{}, Core: inv.Caller}
	if in.Args == nil {
		in.Args = map[string]any{}
	}
	for _, n := range inv.EnvNames {
		if v, ok := inv.Env[n]; ok {
			in.Env[n] = v
		}
	}
	body, err := json.Marshal(in)
	if err != nil {
		return Result{}, fmt.Errorf("fn: encoding the input of %s version %s: %w", inv.Name, inv.Version, err)
	}
	if len(body) > g.cfg.MaxInputBytes {
		return Result{}, &LimitError{What: "input", Limit: g.cfg.MaxInputBytes}
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url(inv), bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("fn: the gateway request of %s version %s: %w", inv.Name, inv.Version, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Core-App", inv.App)
	req.Header.Set("X-Core-Function", inv.Name)
	req.Header.Set("X-Core-Version", inv.Version)
	req.Header.Set("X-Core-Call", call)
	res, err := g.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			g.note(inv, call, "the function gateway did not answer within %s", g.cfg.Timeout)
			return Result{}, &TimeoutError{Name: inv.Name, Version: inv.Version, After: time.Since(start)}
		}
		// net/http leaves a URL's password out of its errors.
		g.note(inv, call, "the function gateway could not be reached: %v", err)
		return Result{}, g.failed(inv, "the function gateway could not be reached")
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, int64(g.cfg.MaxResultBytes)+1))
	if err != nil {
		g.note(inv, call, "reading the gateway's answer failed: %v", err)
		return Result{}, g.failed(inv, "reading the function gateway's answer failed")
	}
	if len(out) > g.cfg.MaxResultBytes {
		return Result{}, &LimitError{What: "result", Limit: g.cfg.MaxResultBytes}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var fe struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(out, &fe) == nil && fe.Message != "" {
			if fe.Code == "" {
				fe.Code = DefaultErrorCode
			}
			return Result{}, &FuncError{Code: cut(fe.Code, maxCodeLen), Message: cut(fe.Message, maxMessageLen)}
		}
		g.note(inv, call, "the function gateway answered %s: %s", res.Status, cut(string(bytes.TrimSpace(out)), 512))
		return Result{}, g.failed(inv, "the function gateway answered "+res.Status)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		out = []byte("null")
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		g.note(inv, call, "the answer is not JSON: %v", err)
		return Result{}, g.failed(inv, "the function's answer is not JSON")
	}
	return Result{Value: v, JSON: out, Duration: time.Since(start)}, nil
}

// url is the function's URL at the gateway.
func (g *Gateway) url(inv Invocation) string {
	return strings.NewReplacer("{app}", dnsName(inv.App), "{name}", dnsName(inv.Name), "{version}", dnsName(inv.Version)).Replace(g.cfg.URL)
}

// dnsName lowers s and turns what a DNS label may not hold into '-'.
func dnsName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, s)
}

func (g *Gateway) failed(inv Invocation, msg string) error {
	return &ExceptionError{Name: inv.Name, Version: inv.Version, Message: msg}
}

// note writes a runtime entry to the instance's function log.
func (g *Gateway) note(inv Invocation, call, format string, args ...any) {
	if g.logs == nil || inv.Caller.InstanceID == "" {
		return
	}
	g.logs.Append(inv.Caller.InstanceID, []LogEntry{{
		Time: time.Now().UTC(), Level: "runtime", Function: inv.Name + "@" + inv.Version, Call: call,
		Message: fmt.Sprintf(format, args...),
	}})
}
