// Package metrics exposes the service's figures in the Prometheus text
// format, for a separate listener (cored serve --metrics-addr; never the
// public one). Every name starts with core_. Labels stay few and bounded:
// the door, the route pattern (echo's, never the path), the status code,
// the store operation, the function call's outcome. Per-instance figures
// are not labels (ten thousand instances would explode the series): they
// come from the admin API.
//
//	core_http_requests_total{door,route,status}        counter
//	core_http_request_duration_seconds{door,route}     histogram
//	core_store_operation_duration_seconds{op}          histogram
//	core_function_calls_total{outcome}                 counter: ok, error, timeout, busy, memory
//	core_function_call_duration_seconds                histogram
//	core_document_cache_lookups_total{result}          counter: hit, miss
//	core_instances                                     gauge
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors, in a registry of their own (not
// Prometheus's default one, which libraries write to). Safe for
// concurrent use.
type Metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	storeOps   *prometheus.HistogramVec
	fnCalls    *prometheus.CounterVec
	fnDuration prometheus.Histogram
}

// Sources are figures read when scraped.
type Sources struct {
	// DocumentCache returns the document caches' hits and misses
	// (gql.DocumentCacheStats).
	DocumentCache func() (hits, misses uint64)
	// Instances returns how many instances are served.
	Instances func() int
	// HookPosts returns the event hook posts of this process that
	// succeeded and that failed (each failure is retried, until the hook
	// is disabled) (hooks.Service.Stats).
	HookPosts func() (delivered, failed uint64)
	// ScheduledRuns returns the scheduled function runs of this process,
	// and how many of them failed (schedule.Service.Stats).
	ScheduledRuns func() (runs, failed uint64)
}

// New returns the collectors, registered; sources' nil fields are left
// out.
func New(src Sources) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "core_http_requests_total", Help: "Requests answered, by door, route pattern and status code.",
		}, []string{"door", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "core_http_request_duration_seconds", Help: "Time to answer a request, by door and route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"door", "route"}),
		storeOps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "core_store_operation_duration_seconds", Help: "Time of store operations, by operation.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5},
		}, []string{"op"}),
		fnCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "core_function_calls_total", Help: "Function calls, by outcome: ok, error (the function failed), timeout, busy (no room to run), memory (stopped at its memory limit).",
		}, []string{"outcome"}),
		fnDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "core_function_call_duration_seconds", Help: "Time of function calls, waiting for room included.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.storeOps, m.fnCalls, m.fnDuration)
	if src.DocumentCache != nil {
		for _, result := range []string{"hit", "miss"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "core_document_cache_lookups_total", Help: "Lookups of parsed GraphQL documents, by result.",
				ConstLabels: prometheus.Labels{"result": result},
			}, func() float64 {
				hits, misses := src.DocumentCache()
				if result == "hit" {
					return float64(hits)
				}
				return float64(misses)
			}))
		}
	}
	if src.HookPosts != nil {
		for _, outcome := range []string{"delivered", "failed"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "core_hook_posts_total", Help: "Event hook posts, by outcome: delivered, or failed (to be retried).",
				ConstLabels: prometheus.Labels{"outcome": outcome},
			}, func() float64 {
				delivered, failed := src.HookPosts()
				if outcome == "delivered" {
					return float64(delivered)
				}
				return float64(failed)
			}))
		}
	}
	if src.ScheduledRuns != nil {
		for _, outcome := range []string{"succeeded", "failed"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "core_scheduled_runs_total", Help: "Scheduled function runs, by outcome: succeeded or failed.",
				ConstLabels: prometheus.Labels{"outcome": outcome},
			}, func() float64 {
				runs, failed := src.ScheduledRuns()
				if outcome == "failed" {
					return float64(failed)
				}
				return float64(runs - failed)
			}))
		}
	}
	if src.Instances != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "core_instances", Help: "Instances served.",
		}, func() float64 { return float64(src.Instances()) }))
	}
	return m
}

// Handler serves the text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Middleware counts and times every request by door and route pattern.
func (m *Metrics) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // answer now, so that the status is known
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		door := Door(route)
		m.requests.WithLabelValues(door, route, strconv.Itoa(c.Response().Status)).Inc()
		m.latency.WithLabelValues(door, route).Observe(time.Since(start).Seconds())
		return nil
	}
}

// Door names the door of a route pattern: graphql, rest, files (uploads
// and downloads), webhook, admin, registry, health or other.
func Door(route string) string {
	switch {
	case route == "/graphql":
		return "graphql"
	case strings.HasPrefix(route, "/upload"), strings.HasPrefix(route, "/rest/v1/upload"), strings.HasPrefix(route, "/file/"):
		return "files"
	case strings.HasPrefix(route, "/rest/"):
		return "rest"
	case strings.HasPrefix(route, "/webhook/"):
		return "webhook"
	case strings.HasPrefix(route, "/admin/"):
		return "admin"
	case route == "/v2" || strings.HasPrefix(route, "/v2/"):
		return "registry"
	case route == "/healthz" || route == "/readyz":
		return "health"
	}
	return "other"
}

// observeStore records one store operation.
func (m *Metrics) observeStore(op string, start time.Time) {
	m.storeOps.WithLabelValues(op).Observe(time.Since(start).Seconds())
}
