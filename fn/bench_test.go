package fn

import (
	"context"
	"testing"
	"time"
)

// BenchmarkInvoke measures calls of a small function on a warm pool: the
// package is cached and compiled, workers are running. Each call still
// gets a fresh runtime. inline runs calls in this process, process in
// worker processes (the default, Config.Processes). calls/s is over the
// wall clock of the run; cpu-µs/call is the CPU time per call of this
// process and its worker processes (pool refills and GC included), which
// a busy machine disturbs less.
func BenchmarkInvoke(b *testing.B) {
	for _, mode := range []struct {
		name      string
		processes bool
	}{{"inline", false}, {"process", true}} {
		e := newEnv(b, func(c *Config) { c.Processes = mode.processes })
		e.publish("add", "v1", `exports.main = function (input, callback) {
			callback({ sum: input.args.a + input.args.b, who: input.core.account_id }, null);
		};`)
		inv := Invocation{App: testApp, Name: "add", Version: "v1", Args: map[string]any{"a": 1, "b": 2},
			Caller: Caller{AccountID: "acc", InstanceID: "inst", Domain: "shop.test"}}
		ctx := context.Background()
		if _, err := e.js.Invoke(ctx, inv); err != nil {
			b.Fatal(err)
		}

		b.Run(mode.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			start, cpu0 := time.Now(), cpuTime()
			for b.Loop() {
				if _, err := e.js.Invoke(ctx, inv); err != nil {
					b.Fatal(err)
				}
			}
			report(b, start, cpu0)
		})
		b.Run(mode.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			start, cpu0 := time.Now(), cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.js.Invoke(ctx, inv); err != nil {
						b.Error(err)
						return
					}
				}
			})
			report(b, start, cpu0)
		})
	}
}

func report(b *testing.B, start time.Time, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
	}
}
