package fn

import (
	"errors"
	"fmt"
	"time"
)

// Config bounds the embedded JavaScript runtime (see NewJS).
type Config struct {
	// Timeout is the deadline of one call (a shorter context deadline
	// wins). On expiry the call is interrupted.
	Timeout time.Duration
	// MaxConcurrent is how many calls run at once (the size of the
	// worker pool); more wait for a worker until their deadline
	// (ErrBusy).
	MaxConcurrent int
	// MaxInputBytes bounds input (args, env and core as JSON).
	MaxInputBytes int
	// MaxResultBytes bounds the result as JSON.
	MaxResultBytes int
	// MaxConsoleBytes bounds the console output one call keeps; lines
	// beyond it are counted and dropped.
	MaxConsoleBytes int
	// MaxLineBytes bounds one console line (longer ones are cut).
	MaxLineBytes int
	// MaxCallStack is the deepest JavaScript call stack.
	MaxCallStack int
	// MaxGraphQLCalls is how many core.graphql requests one call may
	// make; their answers are bounded by MaxInputBytes.
	MaxGraphQLCalls int
	// MaxDepth is how deep functions may reach each other through
	// core.graphql (a function calling a field bound to a function, …).
	MaxDepth int
	// Fetch bounds outbound fetch (used only where an instance enables it).
	Fetch FetchConfig
	// Processes runs every call in a worker process of the pool
	// (process.go) instead of in this one, so that Memory is a bound that
	// holds: a call over it is stopped, a worker that runs out of memory
	// dies alone and is replaced. DefaultConfig sets it.
	Processes bool
	// Memory bounds the heap one call may use (only with Processes);
	// Invocation.Memory asks for another bound, up to MaxMemory, which is
	// also the operating-system limit of each worker process's data.
	Memory    int64
	MaxMemory int64
	// IdleWorkers is how many idle worker processes (with Processes) are
	// kept for the next calls, each for up to a minute; the others wait
	// WorkerLinger for a call, then end. A worker that grew more than
	// 16 MiB past its start size is not kept at all: it ends after its
	// call (worker.go, workerRetire).
	IdleWorkers  int
	WorkerLinger time.Duration
}

// FetchConfig bounds fetch() calls.
type FetchConfig struct {
	// Timeout bounds one fetch; the call's deadline bounds it too.
	Timeout time.Duration
	// MaxRequestBytes and MaxResponseBytes bound the bodies.
	MaxRequestBytes  int
	MaxResponseBytes int
	// MaxCalls is how many fetches one call may start.
	MaxCalls int
	// MaxRedirects is how many redirects one fetch follows.
	MaxRedirects int
}

// DefaultConfig returns the runtime's defaults: 5 s per call, 64 calls at
// once, each in a worker process with 64 MiB of memory (256 MiB at
// most), 4 idle workers kept and the others ended after 10 s idle, 1 MiB
// input and result, 64 KiB of console output per call.
func DefaultConfig() Config {
	return Config{
		Timeout:         5 * time.Second,
		MaxConcurrent:   64,
		MaxInputBytes:   1 << 20,
		MaxResultBytes:  1 << 20,
		MaxConsoleBytes: 64 << 10,
		MaxLineBytes:    4 << 10,
		MaxCallStack:    2000,
		MaxGraphQLCalls: 32,
		MaxDepth:        3,
		Processes:       true,
		Memory:          64 << 20,
		MaxMemory:       256 << 20,
		IdleWorkers:     4,
		WorkerLinger:    10 * time.Second,
		Fetch: FetchConfig{
			Timeout:          10 * time.Second,
			MaxRequestBytes:  1 << 20,
			MaxResponseBytes: 1 << 20,
			MaxCalls:         16,
			MaxRedirects:     5,
		},
	}
}

// minMemory is the smallest memory bound of a call: a runtime and a
// small package need a few MiB.
const minMemory = 8 << 20

// memoryOf is the memory bound of a call that asks for asked bytes (0:
// the default).
func (c Config) memoryOf(asked int64) int64 {
	switch {
	case asked <= 0:
		return c.Memory
	case asked > c.MaxMemory:
		return c.MaxMemory
	case asked < minMemory:
		return minMemory
	}
	return asked
}

// Validate reports what NewJS would refuse in c.
func (c Config) Validate() error {
	var errs []error
	positive := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("Timeout must be positive, got %s", c.Timeout))
	}
	if c.Fetch.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("Fetch.Timeout must be positive, got %s", c.Fetch.Timeout))
	}
	positive("MaxConcurrent", c.MaxConcurrent)
	positive("MaxInputBytes", c.MaxInputBytes)
	positive("MaxResultBytes", c.MaxResultBytes)
	positive("MaxConsoleBytes", c.MaxConsoleBytes)
	positive("MaxLineBytes", c.MaxLineBytes)
	positive("MaxCallStack", c.MaxCallStack)
	positive("MaxGraphQLCalls", c.MaxGraphQLCalls)
	positive("MaxDepth", c.MaxDepth)
	positive("Fetch.MaxRequestBytes", c.Fetch.MaxRequestBytes)
	positive("Fetch.MaxResponseBytes", c.Fetch.MaxResponseBytes)
	positive("Fetch.MaxCalls", c.Fetch.MaxCalls)
	if c.Memory < minMemory || c.MaxMemory < c.Memory {
		errs = append(errs, fmt.Errorf("Memory must be at least %s and MaxMemory at least Memory, got %d and %d", formatBytes(minMemory), c.Memory, c.MaxMemory))
	}
	if c.IdleWorkers < 0 || c.WorkerLinger <= 0 {
		errs = append(errs, fmt.Errorf("IdleWorkers must not be negative and WorkerLinger must be positive, got %d and %s", c.IdleWorkers, c.WorkerLinger))
	}
	if c.Fetch.MaxRedirects < 0 {
		errs = append(errs, fmt.Errorf("Fetch.MaxRedirects must not be negative, got %d", c.Fetch.MaxRedirects))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fn: invalid config: %w", err)
	}
	return nil
}

// PackagesConfig bounds published packages (see NewPackages).
type PackagesConfig struct {
	// MaxUploadBytes bounds an uploaded source or archive (the server's
	// body limit applies too).
	MaxUploadBytes int
	// MaxUnpackedBytes bounds the files of a package, summed.
	MaxUnpackedBytes int
	// MaxFiles bounds the number of files of a package.
	MaxFiles int
	// CacheBytes bounds the packages (and their compiled programs) kept
	// in memory for warm calls.
	CacheBytes int
	// Revalidate is how long a cached package is served before the store
	// is asked again whether it changed (another process may have
	// republished or deleted it).
	Revalidate time.Duration
}

// DefaultPackagesConfig returns 8 MiB uploads, 16 MiB and 1,000 files
// unpacked, a 64 MiB cache revalidated every second.
func DefaultPackagesConfig() PackagesConfig {
	return PackagesConfig{
		MaxUploadBytes:   8 << 20,
		MaxUnpackedBytes: 16 << 20,
		MaxFiles:         1000,
		CacheBytes:       64 << 20,
		Revalidate:       time.Second,
	}
}

// LogConfig bounds the function logs (see NewLog).
type LogConfig struct {
	// Entries is how many entries an instance's log keeps (the oldest
	// go first).
	Entries int
	// MaxBytes bounds an instance's log, summed over its messages.
	MaxBytes int
	// FlushInterval is how often buffered entries are written to the
	// store.
	FlushInterval time.Duration
}

// DefaultLogConfig returns 1,000 entries or 512 KiB per instance, flushed
// every second.
func DefaultLogConfig() LogConfig {
	return LogConfig{Entries: 1000, MaxBytes: 512 << 10, FlushInterval: time.Second}
}
