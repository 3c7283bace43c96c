package analytics

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestRetries5xxThenSucceeds(t *testing.T) {
	f := startIngest(t, func(n int) reply {
		switch n {
		case 1:
			return reply{Status: 500}
		case 2:
			return reply{Status: 503}
		}
		return reply{Status: 200}
	})
	c := newTestClient(t, f)
	c.FlushAt = 1
	rec := &recorder{}
	c.Callback = rec
	_ = c.Track(&Track{UserId: "u", Event: "e", MessageId: "m-1"})
	_ = c.Close()
	reqs := f.snapshot()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if len(r.Body.Batch) != 1 || r.Body.Batch[0]["messageId"] != "m-1" {
			t.Fatalf("retry changed the batch: %v", r.Body.Batch)
		}
	}
	if len(rec.failures) != 0 || len(rec.successes) != 1 {
		t.Fatalf("callbacks: %d successes, %v failures", len(rec.successes), rec.failures)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	f := startIngest(t, func(int) reply { return reply{Status: 400, Body: `{"success":false,"code":"invalid_json"}`} })
	c := newTestClient(t, f)
	c.FlushAt = 1
	rec := &recorder{}
	c.Callback = rec
	msg := &Track{UserId: "u", Event: "e"}
	_ = c.Track(msg)
	_ = c.Close()
	if n := len(f.snapshot()); n != 1 {
		t.Fatalf("%d requests, want exactly 1", n)
	}
	if len(rec.failures) != 1 {
		t.Fatalf("%d failures, want 1", len(rec.failures))
	}
	var de *DeliveryError
	if !errors.As(rec.failures[0], &de) || de.Code() != CodeBatchRejected || de.Status != 400 || de.Attempts != 1 ||
		!strings.Contains(de.Error(), "invalid_json") {
		t.Fatalf("failure %#v", rec.failures[0])
	}
}

func TestOther4xxAreNotRetried(t *testing.T) {
	for _, status := range []int{401, 403, 404, 408, 413} {
		f := startIngest(t, func(int) reply { return reply{Status: status} })
		c := newTestClient(t, f)
		c.Callback = &recorder{}
		_ = c.Identify(&Identify{UserId: "u"})
		_ = c.Close()
		if n := len(f.snapshot()); n != 1 {
			t.Fatalf("status %d: %d requests, want 1", status, n)
		}
	}
}

func TestTooManyRequestsIsRetriedHonouringRetryAfter(t *testing.T) {
	f := startIngest(t, func(n int) reply {
		if n == 1 {
			return reply{Status: 429, RetryAfter: "1"}
		}
		return reply{Status: 200}
	})
	c := newTestClient(t, f)
	rec := &recorder{}
	c.Callback = rec
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	reqs := f.snapshot()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if waited := reqs[1].At.Sub(reqs[0].At); waited < 950*time.Millisecond {
		t.Fatalf("retried after %v; Retry-After said 1s", waited)
	}
	if len(rec.failures) != 0 {
		t.Fatal(rec.failures)
	}
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	f := startIngest(t, func(n int) reply {
		if n <= 2 {
			return reply{Drop: true}
		}
		return reply{Status: 200}
	})
	c := newTestClient(t, f)
	rec := &recorder{}
	c.Callback = rec
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	if n := len(f.snapshot()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	if len(rec.successes) != 1 {
		t.Fatalf("successes %d", len(rec.successes))
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	f := startIngest(t, func(n int) reply {
		if n == 1 {
			return reply{Status: 200, Delay: time.Second}
		}
		return reply{Status: 200}
	})
	c := newTestClient(t, f)
	c.Timeout = 100 * time.Millisecond
	rec := &recorder{}
	c.Callback = rec
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	if n := len(f.snapshot()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if len(rec.successes) != 1 || len(rec.failures) != 0 {
		t.Fatalf("callbacks: %d successes, %v", len(rec.successes), rec.failures)
	}
}

func TestRetriesExhausted(t *testing.T) {
	f := startIngest(t, func(int) reply { return reply{Status: 502} })
	c := newTestClient(t, f)
	c.MaxRetries = 3
	rec := &recorder{}
	c.Callback = rec
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	if n := len(f.snapshot()); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
	var de *DeliveryError
	if len(rec.failures) != 1 || !errors.As(rec.failures[0], &de) || de.Code() != CodeRetriesExhausted || de.Attempts != 4 || de.Status != 502 {
		t.Fatalf("failures %v", rec.failures)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := New("k")
	c.Endpoint = "http://" + addr
	c.MaxRetries = 2
	c.RetryMin, c.RetryMax = time.Millisecond, time.Millisecond
	rec := &recorder{}
	c.Callback = rec
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	var de *DeliveryError
	var opErr *net.OpError
	if len(rec.failures) != 1 || !errors.As(rec.failures[0], &de) || de.Attempts != 3 || de.Status != 0 || !errors.As(de, &opErr) {
		t.Fatalf("failures %v", rec.failures)
	}
}

func TestClassifyAttempt(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	cases := []struct {
		status int
		want   verdict
	}{
		{0, verdictRetry}, {200, verdictSuccess}, {202, verdictSuccess}, {204, verdictSuccess},
		{301, verdictFail}, {400, verdictFail}, {401, verdictFail}, {403, verdictFail}, {404, verdictFail},
		{408, verdictFail}, {413, verdictFail}, {415, verdictFail},
		{429, verdictRetry}, {500, verdictRetry}, {502, verdictRetry}, {503, verdictRetry}, {504, verdictRetry},
	}
	for _, tc := range cases {
		if got, _, _ := classifyAttempt(tc.status, "", now); got != tc.want {
			t.Errorf("status %d: got %v, want %v", tc.status, got, tc.want)
		}
	}
	if _, wait, ok := classifyAttempt(429, "2", now); !ok || wait != 2*time.Second {
		t.Errorf("Retry-After 2: %v %v", wait, ok)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false}, {"soon", 0, false}, {"-1", 0, false}, {" 3 ", 3 * time.Second, true},
		{"3600", MaxRetryAfterWait, true},
		{"Sat, 21 Nov 2026 23:00:07 GMT", 7 * time.Second, true},
		{"Sat, 21 Nov 2026 22:00:00 GMT", 0, true},
	}
	for _, tc := range cases {
		if got, ok := parseRetryAfter(tc.in, now); got != tc.want || ok != tc.ok {
			t.Errorf("%q: got %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	min, max := 100*time.Millisecond, 10*time.Second
	cases := []struct {
		retry   int
		nominal time.Duration
	}{{0, 100 * time.Millisecond}, {1, 200 * time.Millisecond}, {3, 800 * time.Millisecond}, {6, 6400 * time.Millisecond}, {7, max}, {70, max}}
	for _, tc := range cases {
		if got := backoffDelay(tc.retry, min, max, func() float64 { return 0 }); got != tc.nominal/2 {
			t.Errorf("retry %d low: %v", tc.retry, got)
		}
		if got := backoffDelay(tc.retry, min, max, func() float64 { return 0.9999999 }); got < tc.nominal-time.Millisecond || got > tc.nominal {
			t.Errorf("retry %d high: %v", tc.retry, got)
		}
	}
}
