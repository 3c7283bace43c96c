package analytics

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// received is one request as the fake ingest saw it.
type received struct {
	Method, Path, Auth, ContentType, UserAgent string
	Bytes                                      int
	Body                                       struct {
		Batch   []map[string]interface{} `json:"batch"`
		SentAt  string                   `json:"sentAt"`
		Context map[string]interface{}   `json:"context"`
	}
	Raw []byte
	At  time.Time
}

// reply is the fake's answer; Drop makes it cut the connection instead (a network error).
type reply struct {
	Status     int
	RetryAfter string
	Body       string
	Drop       bool
	Delay      time.Duration // answer only after this long
}

// fakeIngest is a real HTTP server on 127.0.0.1 recording every request.
type fakeIngest struct {
	*httptest.Server
	mu        sync.Mutex
	requests  []received
	respond   func(n int) reply // n counts requests from 1
	arrivedCh chan struct{}
}

func startIngest(t *testing.T, respond func(n int) reply) *fakeIngest {
	t.Helper()
	f := &fakeIngest{respond: respond, arrivedCh: make(chan struct{}, 1)}
	if f.respond == nil {
		f.respond = func(int) reply { return reply{Status: 200, Body: `{"success":true}`} }
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeIngest) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := received{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), UserAgent: r.Header.Get("User-Agent"), Bytes: len(raw), Raw: raw, At: time.Now()}
	if err := json.Unmarshal(raw, &rec.Body); err != nil {
		http.Error(w, "bad json", 400)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	n := len(f.requests)
	f.mu.Unlock()
	select {
	case f.arrivedCh <- struct{}{}:
	default:
	}
	rep := f.respond(n)
	if rep.Drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.WriteHeader(rep.Status)
	_, _ = io.WriteString(w, rep.Body)
}

func (f *fakeIngest) snapshot() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.requests...)
}

func (f *fakeIngest) messages() []map[string]interface{} {
	var all []map[string]interface{}
	for _, r := range f.snapshot() {
		all = append(all, r.Body.Batch...)
	}
	return all
}

// waitFor polls cond until it holds or the timeout passes.
func (f *fakeIngest) waitFor(t *testing.T, what string, cond func([]received) bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond(f.snapshot()) {
		select {
		case <-f.arrivedCh:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s (%d requests)", what, len(f.snapshot()))
		}
	}
}

// newTestClient returns a client pointed at the fake, with fast retries, closed at cleanup.
func newTestClient(t *testing.T, f *fakeIngest) *Client {
	t.Helper()
	c := New("write-key")
	c.Endpoint = f.URL
	c.RetryMin = time.Millisecond
	c.RetryMax = 5 * time.Millisecond
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// recorder is a Callback that remembers what it was told.
type recorder struct {
	mu        sync.Mutex
	successes []Message
	failures  []error
}

func (r *recorder) Success(m Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.successes = append(r.successes, m)
}

func (r *recorder) Failure(_ Message, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, err)
}
