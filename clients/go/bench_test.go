package analytics

// Benchmarks (not tests). Run in clients/go:
//
//	go test -bench . -run '^$' -benchtime 300000x ./...
//
// BenchmarkEnqueue: cost of one call (validation, building, serialisation, queueing) with
// nothing being sent, from 4 goroutines at once. BenchmarkDelivery: b.N track calls from
// 4 producer goroutines to a local server on 127.0.0.1 that reads and discards each request;
// it reports the time spent inside the calls per call, the sustained rate from the first call
// until Close returns (everything delivered), and the raw ceiling: the same messages,
// pre-serialised into full batches, posted straight to that server with the same HTTP client
// and MaxInFlight concurrency; and the ratio of the two rates.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const benchProducers = 4

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true}`)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func benchTrack(i int) *Track {
	return &Track{
		UserId: fmt.Sprintf("user-%d", i%5000),
		Event:  "Order Completed",
		Properties: map[string]interface{}{
			"orderId": fmt.Sprintf("o-%d", i), "total": 42.5 + float64(i%100), "currency": "EUR", "coupon": nil,
		},
		Context: map[string]interface{}{"ip": "203.0.113.7"},
	}
}

func BenchmarkEnqueue(b *testing.B) {
	c := New("bench-key")
	c.Endpoint = "http://127.0.0.1:9" // never reached: nothing is flushed
	c.FlushAt = 1 << 30
	c.FlushAfter = time.Hour
	c.MaxQueueSize = 1 << 30
	msg := benchTrack(1)
	_ = c.Track(msg) // start the client outside the timing
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Track(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDelivery(b *testing.B) {
	srv := benchServer(b)
	hc := NewHTTPClient(DefaultMaxInFlight)
	n := b.N

	// Client: producers call Track; Close returns once everything is delivered.
	c := New("bench-key")
	c.Endpoint = srv.URL
	c.HTTPClient = hc
	c.MaxQueueSize = n + 1
	var inCalls atomic.Int64
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for p := 0; p < benchProducers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			var spent time.Duration
			for i := p; i < n; i += benchProducers {
				msg := benchTrack(i)
				t0 := time.Now()
				if err := c.Track(msg); err != nil {
					failed.Add(1)
				}
				spent += time.Since(t0)
			}
			inCalls.Add(int64(spent))
		}(p)
	}
	wg.Wait()
	_ = c.Close()
	clientElapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d calls failed", failed.Load())
	}

	// Raw ceiling: the same calls serialised up front, cut into full batches.
	now := time.Now()
	jsons := make([][]byte, n)
	for i := range jsons {
		built, err := buildMessage(benchTrack(i), now, newUUID)
		if err != nil {
			b.Fatal(err)
		}
		jsons[i] = built.json
	}
	var bodies [][]byte
	for start := 0; start < n; {
		rest := jsons[start:]
		k := nextBatchSize(len(rest), func(i int) int { return len(rest[i]) }, batchOverheadBytes, MaxBatchBytes, MaxBatchMessages)
		bodies = append(bodies, renderBatchBody(rest[:k], FormatTimestamp(now)))
		start += k
	}
	d := &deliverer{http: hc, url: srv.URL + batchPath, auth: "Basic YmVuY2gta2V5Og==", timeout: DefaultTimeout}
	var next atomic.Int64
	rawStart := time.Now()
	var rawWG sync.WaitGroup
	for w := 0; w < DefaultMaxInFlight; w++ {
		rawWG.Add(1)
		go func() {
			defer rawWG.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				if status, _, _, err := d.attempt(bodies[i]); status != 200 {
					b.Errorf("raw post: %d %v", status, err)
					return
				}
			}
		}()
	}
	rawWG.Wait()
	rawElapsed := time.Since(rawStart)

	clientRate := float64(n) / clientElapsed.Seconds()
	rawRate := float64(n) / rawElapsed.Seconds()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(inCalls.Load())/float64(n), "enqueue-ns/call")
	b.ReportMetric(clientRate, "client-calls/s")
	b.ReportMetric(rawRate, "raw-calls/s")
	b.ReportMetric(clientRate/rawRate, "client/raw")
	b.ReportMetric(float64(len(bodies)), "raw-batches")
}
