package analytics

import (
	"fmt"
	"sync"
	"testing"
)

func TestConcurrentCallsEachDeliveredOnce(t *testing.T) {
	// Every seventh request fails with 503, so retries run alongside fresh sends.
	f := startIngest(t, func(n int) reply {
		if n%7 == 3 {
			return reply{Status: 503}
		}
		return reply{Status: 200}
	})
	c := newTestClient(t, f)
	rec := &recorder{}
	c.Callback = rec
	const goroutines, perGoroutine = 100, 100
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perGoroutine)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				id := fmt.Sprintf("g%03d-%03d", g, i)
				if err := c.Track(&Track{MessageId: id, UserId: fmt.Sprint(g), Event: "Concurrent"}); err != nil {
					errs <- err
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_ = c.Close()

	delivered := map[string]int{}
	for i, r := range f.snapshot() {
		if (i+1)%7 == 3 {
			continue // answered 503: retried
		}
		for _, m := range r.Body.Batch {
			delivered[m["messageId"].(string)]++
		}
	}
	if len(delivered) != goroutines*perGoroutine {
		t.Fatalf("%d distinct messages delivered, want %d", len(delivered), goroutines*perGoroutine)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Fatalf("%s delivered %d times", id, n)
		}
	}
	if len(rec.successes) != goroutines*perGoroutine || len(rec.failures) != 0 {
		t.Fatalf("callbacks: %d successes, %d failures", len(rec.successes), len(rec.failures))
	}
}

func TestGeneratedMessageIdsAreUnique(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	var wg sync.WaitGroup
	for g := 0; g < 20; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				_ = c.Identify(&Identify{AnonymousId: "a"})
			}
		}()
	}
	wg.Wait()
	_ = c.Close()
	seen := map[string]bool{}
	for _, m := range f.messages() {
		id := m["messageId"].(string)
		if seen[id] {
			t.Fatalf("duplicate messageId %s", id)
		}
		seen[id] = true
	}
	if len(seen) != 2000 {
		t.Fatalf("%d messages", len(seen))
	}
}
