package fn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dop251/goja"

	"github.com/corehq/core/internal/netguard"
)

// newTransport is the HTTP transport of every fetch. Its dialer checks
// the address it is about to connect to (after DNS resolution, for every
// connection, redirects included) and refuses non-public ones; no proxy
// is used, so the check sees the real destination.
func (j *JS) newTransport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: j.control}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// control runs before each connect with the resolved address.
func (j *JS) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", netguard.ErrNotPublic, address)
	}
	return j.permit(ap.Addr())
}

// fetchMethods are the methods fetch sends.
var fetchMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// fetchRequest is a checked fetch() call.
type fetchRequest struct {
	method, url string
	header      http.Header
	body        []byte
	allow       []string
	redirect    string // follow, manual or error
}

// fetchResponse is what came back, body read in full (bounded).
type fetchResponse struct {
	status     int
	url        string
	redirected bool
	header     http.Header
	body       []byte
}

// fetch is the global fetch(url[, {method, headers, body,
// redirect}]): a subset of the WHATWG fetch returning a Promise of a
// response with status, statusText, ok, url, redirected, headers.get(),
// headers.has(), headers.forEach(), text(), json() and arrayBuffer().
func (c *call) fetch(ctx context.Context, fc goja.FunctionCall) goja.Value {
	vm := c.vm
	p, resolve, reject := vm.NewPromise()
	req, err := c.fetchRequest(fc)
	if err != nil {
		if rerr := reject(vm.NewTypeError("fetch failed: %s", err.Error())); rerr != nil {
			panic(rerr)
		}
		return vm.ToValue(p)
	}
	c.pending++
	c.fetches++
	go func() {
		res, err := c.j.doFetch(ctx, req)
		c.post(func() error {
			if err != nil {
				return reject(vm.NewTypeError("fetch failed: %s", err.Error()))
			}
			return resolve(c.response(res))
		})
	}()
	return vm.ToValue(p)
}

// fetchRequest checks a fetch() call against the instance's policy and
// the runtime's bounds.
func (c *call) fetchRequest(fc goja.FunctionCall) (*fetchRequest, error) {
	pol := c.inv.Fetch
	if !pol.Enabled {
		return nil, errors.New("fetch is not enabled for this instance")
	}
	if c.fetches >= c.j.cfg.Fetch.MaxCalls {
		return nil, fmt.Errorf("a call may start at most %d fetches", c.j.cfg.Fetch.MaxCalls)
	}
	raw := fc.Argument(0).String()
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https URL", cut(raw, 200))
	}
	if !hostAllowed(pol.AllowHosts, u) {
		return nil, fmt.Errorf("host %s is not on the instance's fetch allow-list", u.Hostname())
	}
	r := &fetchRequest{method: "GET", url: u.String(), header: http.Header{}, allow: pol.AllowHosts, redirect: "follow"}
	opts, _ := fc.Argument(1).(*goja.Object)
	if opts == nil {
		return r, nil
	}
	if m := opts.Get("method"); !isNullish(m) {
		r.method = strings.ToUpper(m.String())
		if !slices.Contains(fetchMethods, r.method) {
			return nil, fmt.Errorf("method %q is not supported", cut(m.String(), 20))
		}
	}
	if h, ok := opts.Get("headers").(*goja.Object); ok {
		for _, k := range h.Keys() {
			v := h.Get(k).String()
			if strings.ContainsAny(k+v, "\r\n") {
				return nil, fmt.Errorf("header %q holds a line break", cut(k, 40))
			}
			r.header.Add(k, v)
		}
	}
	if b := opts.Get("body"); !isNullish(b) {
		if s, ok := b.Export().(string); ok {
			r.body = []byte(s)
		} else {
			switch x := b.Export().(type) {
			case goja.ArrayBuffer:
				r.body = x.Bytes()
			case []byte:
				r.body = x
			default:
				return nil, errors.New("body must be a string, a Buffer or a typed array (JSON.stringify objects)")
			}
		}
		if len(r.body) > c.j.cfg.Fetch.MaxRequestBytes {
			return nil, fmt.Errorf("the request body is larger than %d bytes", c.j.cfg.Fetch.MaxRequestBytes)
		}
	}
	if rd := opts.Get("redirect"); !isNullish(rd) {
		r.redirect = rd.String()
		if r.redirect != "follow" && r.redirect != "manual" && r.redirect != "error" {
			return nil, fmt.Errorf("redirect must be follow, manual or error, not %q", cut(r.redirect, 20))
		}
	}
	return r, nil
}

// doFetch sends the request, following redirects only to allowed hosts,
// and reads the response body up to its bound.
func (j *JS) doFetch(ctx context.Context, r *fetchRequest) (*fetchResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, j.cfg.Fetch.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, bytes.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	req.Header = r.header
	client := &http.Client{Transport: j.fetch, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		switch {
		case r.redirect == "manual":
			return http.ErrUseLastResponse
		case r.redirect == "error":
			return errors.New(`the server redirected and redirect is "error"`)
		case len(via) > j.cfg.Fetch.MaxRedirects:
			return fmt.Errorf("more than %d redirects", j.cfg.Fetch.MaxRedirects)
		case next.URL.Scheme != "http" && next.URL.Scheme != "https":
			return fmt.Errorf("redirect to a %s URL", next.URL.Scheme)
		case !hostAllowed(r.allow, next.URL):
			return fmt.Errorf("redirect to host %s, which is not on the instance's fetch allow-list", next.URL.Hostname())
		}
		return nil
	}}
	res, err := client.Do(req)
	if err != nil {
		return nil, fetchError(err)
	}
	defer res.Body.Close()
	limit := j.cfg.Fetch.MaxResponseBytes
	body, err := io.ReadAll(io.LimitReader(res.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", fetchError(err))
	}
	if len(body) > limit {
		return nil, fmt.Errorf("the response body is larger than %d bytes", limit)
	}
	return &fetchResponse{
		status:     res.StatusCode,
		url:        res.Request.URL.String(),
		redirected: res.Request.URL.String() != r.url,
		header:     res.Header,
		body:       body,
	}, nil
}

// fetchError says why a request failed without Go's wrapping noise.
func fetchError(err error) error {
	switch {
	case errors.Is(err, netguard.ErrNotPublic):
		var ue *url.Error
		host := ""
		if errors.As(err, &ue) {
			if u, perr := url.Parse(ue.URL); perr == nil {
				host = u.Hostname() + " "
			}
		}
		return fmt.Errorf("refused: %sresolves to an address that is not public", host)
	case errors.Is(err, context.DeadlineExceeded):
		return errors.New("timed out")
	case errors.Is(err, context.Canceled):
		return errors.New("canceled")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// response builds the Response object on the call's goroutine.
func (c *call) response(r *fetchResponse) *goja.Object {
	vm := c.vm
	o := vm.NewObject()
	must(o.Set("status", r.status))
	must(o.Set("statusText", http.StatusText(r.status)))
	must(o.Set("ok", r.status >= 200 && r.status < 300))
	must(o.Set("url", r.url))
	must(o.Set("redirected", r.redirected))

	h := vm.NewObject()
	names := make([]string, 0, len(r.header))
	for k := range r.header {
		names = append(names, strings.ToLower(k))
	}
	slices.Sort(names)
	get := func(name string) (string, bool) {
		vals := r.header.Values(name)
		if len(vals) == 0 {
			return "", false
		}
		return strings.Join(vals, ", "), true
	}
	must(h.Set("get", func(fc goja.FunctionCall) goja.Value {
		if v, ok := get(fc.Argument(0).String()); ok {
			return vm.ToValue(v)
		}
		return goja.Null()
	}))
	must(h.Set("has", func(fc goja.FunctionCall) goja.Value {
		_, ok := get(fc.Argument(0).String())
		return vm.ToValue(ok)
	}))
	must(h.Set("forEach", func(fc goja.FunctionCall) goja.Value {
		f, ok := goja.AssertFunction(fc.Argument(0))
		if !ok {
			panic(vm.NewTypeError("headers.forEach needs a function"))
		}
		for _, n := range names {
			v, _ := get(n)
			if _, err := f(goja.Undefined(), vm.ToValue(v), vm.ToValue(n)); err != nil {
				panic(err)
			}
		}
		return goja.Undefined()
	}))
	must(o.Set("headers", h))

	settled := func(v func() (goja.Value, error)) goja.Value {
		p, resolve, reject := vm.NewPromise()
		val, err := v()
		if err != nil {
			var exc *goja.Exception
			if errors.As(err, &exc) {
				err = reject(exc.Value())
			} else {
				err = reject(vm.NewGoError(err))
			}
		} else {
			err = resolve(val)
		}
		if err != nil {
			panic(err)
		}
		return vm.ToValue(p)
	}
	must(o.Set("text", func(goja.FunctionCall) goja.Value {
		return settled(func() (goja.Value, error) { return vm.ToValue(string(r.body)), nil })
	}))
	must(o.Set("json", func(goja.FunctionCall) goja.Value {
		return settled(func() (goja.Value, error) { return c.parseJSON(string(r.body)) })
	}))
	must(o.Set("arrayBuffer", func(goja.FunctionCall) goja.Value {
		return settled(func() (goja.Value, error) { return vm.ToValue(vm.NewArrayBuffer(bytes.Clone(r.body))), nil })
	}))
	return o
}
