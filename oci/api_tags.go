package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
)

// The listing endpoints of the OCI Distribution API, paginated with ?n=
// and ?last= and a Link header to the next page:
//
//	GET /v2/{app}/{name}/tags/list   {"name", "tags"}: the repository's tags, sorted
//	GET /v2/_catalog                 {"repositories"}: every repository (the admin's only, auth.go)

// Page bounds: at most maxTags tags per page (a larger n is lowered, as
// the specification allows with a Link), catalogPage repositories per
// page by default and at most maxCatalog (a larger n is refused, as
// distribution does).
const (
	maxTags     = 1000
	catalogPage = 100
	maxCatalog  = 1000
)

// pageSize reads ?n=: def when absent, PAGINATION_NUMBER_INVALID when not
// a number from 0.
func pageSize(req *http.Request, def int) (int, error) {
	raw := req.URL.Query().Get("n")
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return 0, errcode.ErrorCodePaginationNumberInvalid.WithMessage(fmt.Sprintf("n=%q: a page size is a number from 0", raw))
	}
	return n, nil
}

// nextPage sets the Link to the page after last: the request's URL with
// n and last.
func nextPage(w http.ResponseWriter, req *http.Request, n int, last string) {
	u := *req.URL
	u.RawQuery = url.Values{"n": {strconv.Itoa(n)}, "last": {last}}.Encode()
	u.Fragment = ""
	w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", u.String()))
}

// writeList answers a listing as JSON. Once the status is written, a
// failed write means the client went away: there is nothing to answer.
func writeList(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
	return nil
}

// tagList is the answer of tags/list.
type tagList struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

// tags serves GET /v2/{app}/{name}/tags/list: NAME_UNKNOWN for a
// repository that holds no tag.
func (r *Registry) tags(w http.ResponseWriter, req *http.Request, repo distribution.Repository) error {
	limit, err := pageSize(req, -1) // -1: every tag
	if err != nil {
		return err
	}
	limit = min(limit, maxTags)
	ctx := req.Context()
	out := tagList{Name: repo.Named().Name(), Tags: []string{}}
	more := false
	if limit != 0 {
		tags, err := repo.Tags(ctx).List(ctx, limit, req.URL.Query().Get("last"))
		var unknown distribution.ErrRepositoryUnknown
		switch {
		case errors.As(err, &unknown):
			return errcode.ErrorCodeNameUnknown.WithDetail(map[string]string{"name": out.Name})
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		more = err == nil
		if tags != nil {
			out.Tags = tags
		}
	}
	if more && len(out.Tags) > 0 {
		nextPage(w, req, limit, out.Tags[len(out.Tags)-1])
	}
	return writeList(w, out)
}

// catalog serves GET /v2/_catalog.
func (r *Registry) catalog(w http.ResponseWriter, req *http.Request) error {
	n, err := pageSize(req, catalogPage)
	if err != nil {
		return err
	}
	if n > maxCatalog {
		return errcode.ErrorCodePaginationNumberInvalid.WithMessage(fmt.Sprintf("n=%d: a page holds at most %d repositories", n, maxCatalog))
	}
	repos := make([]string, n)
	filled, more := 0, false
	if n > 0 {
		filled, err = r.ns.Repositories(req.Context(), repos, req.URL.Query().Get("last"))
		switch {
		case err == nil:
			more = true
		case !errors.Is(err, io.EOF) && !isPathNotFound(err):
			return err
		}
	}
	if more && filled > 0 {
		nextPage(w, req, n, repos[filled-1])
	}
	return writeList(w, struct {
		Repositories []string `json:"repositories"`
	}{repos[:filled]})
}
