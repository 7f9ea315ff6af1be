package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// client makes the harness's set-up requests (admin API, seeding) with
// net/http; the measured requests go through conn.
type client struct {
	base string
	hc   *http.Client
}

func newClient(base string) *client {
	return &client{base: base, hc: &http.Client{Timeout: 5 * time.Minute}}
}

// do sends one request; body is sent as is when it is []byte, as JSON
// otherwise, and not at all when nil.
func (c *client) do(ctx context.Context, method, path string, headers map[string]string, body any) (answer, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return answer{}, err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: res.StatusCode, body: out}, nil
}

// call sends a request that must answer one of the statuses in want (any
// 2xx when want is empty) without GraphQL errors; what names it in
// errors. It returns the decoded answer.
func (c *client) call(ctx context.Context, what, method, path string, headers map[string]string, body any, want ...int) (any, error) {
	a, err := c.do(ctx, method, path, headers, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", what, method, path, err)
	}
	good := a.status >= 200 && a.status <= 299
	if len(want) > 0 {
		good = slices.Contains(want, a.status)
	}
	if !good {
		return nil, fmt.Errorf("%s: %s %s answered HTTP %d: %s", what, method, path, a.status, a.excerpt())
	}
	v, err := a.json()
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s answered HTTP %d with a body that is not JSON: %s", what, method, path, a.status, a.excerpt())
	}
	if errs, _ := dig(v, "errors").([]any); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s %s answered HTTP %d with errors: %s", what, method, path, a.status, a.excerpt())
	}
	return v, nil
}
