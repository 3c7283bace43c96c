package analytics

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestFlushAtTwentyByDefault(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAfter = time.Hour
	for i := 0; i < 19; i++ {
		if err := c.Track(&Track{UserId: "u", Event: "e"}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(f.snapshot()); n != 0 {
		t.Fatalf("a call only queues: got %d requests after 19 calls", n)
	}
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	f.waitFor(t, "one batch", func(r []received) bool { return len(r) == 1 })
	if got := len(f.snapshot()[0].Body.Batch); got != 20 {
		t.Fatalf("batch of %d, want 20", got)
	}
}

func TestSizeIsFlushAt(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAfter = time.Hour
	c.Size = 3
	for i := 0; i < 3; i++ {
		_ = c.Identify(&Identify{UserId: "u"})
	}
	f.waitFor(t, "3 messages", func(r []received) bool { return len(r) == 1 && len(r[0].Body.Batch) == 3 })
}

func TestFlushAfter(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAfter = 200 * time.Millisecond
	start := time.Now()
	_ = c.Track(&Track{UserId: "u", Event: "a"})
	_ = c.Track(&Track{UserId: "u", Event: "b"})
	time.Sleep(100 * time.Millisecond)
	if n := len(f.snapshot()); n != 0 {
		t.Fatalf("sent before FlushAfter: %d requests", n)
	}
	f.waitFor(t, "timer flush", func(r []received) bool { return len(r) == 1 })
	if waited := f.snapshot()[0].At.Sub(start); waited < 190*time.Millisecond {
		t.Fatalf("flushed after %v, want ≥ 200ms", waited)
	}
	if got := len(f.snapshot()[0].Body.Batch); got != 2 {
		t.Fatalf("batch of %d, want 2", got)
	}
}

func TestFlushAtOneSendsImmediately(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAfter = time.Hour
	c.FlushAt = 1
	_ = c.Track(&Track{UserId: "u", Event: "first"})
	f.waitFor(t, "first", func(r []received) bool { return len(r) == 1 })
	_ = c.Track(&Track{UserId: "u", Event: "second"})
	f.waitFor(t, "second", func(r []received) bool { return len(r) == 2 })
	for _, r := range f.snapshot() {
		if len(r.Body.Batch) != 1 {
			t.Fatalf("batch of %d, want 1", len(r.Body.Batch))
		}
	}
}

func TestFlushWaitsForDelivery(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	_ = c.Track(&Track{UserId: "u", Event: "a"})
	_ = c.Page(&Page{UserId: "u", Name: "Home"})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.messages()); n != 2 {
		t.Fatalf("after Flush: %d messages delivered, want 2", n)
	}
	_ = c.Flush() // nothing queued
	if n := len(f.snapshot()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestCloseFlushesEverythingThenRefusesCalls(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAfter = time.Hour
	c.MaxInFlight = 2
	rec := &recorder{}
	c.Callback = rec
	for i := 0; i < 95; i++ {
		_ = c.Track(&Track{UserId: "u", Event: "e"})
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.messages()); n != 95 {
		t.Fatalf("%d messages delivered, want 95", n)
	}
	if len(rec.successes) != 95 {
		t.Fatalf("%d Success callbacks, want 95", len(rec.successes))
	}
	if err := c.Track(&Track{UserId: "u", Event: "late"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseWaitsForRetries(t *testing.T) {
	f := startIngest(t, func(n int) reply {
		if n < 3 {
			return reply{Status: 503}
		}
		return reply{Status: 200}
	})
	c := newTestClient(t, f)
	c.RetryMin, c.RetryMax = 20*time.Millisecond, 20*time.Millisecond
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	if n := len(f.snapshot()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *Client)
		field string
	}{
		{"FlushAt and Size disagree", func(c *Client) { c.FlushAt, c.Size = 2, 3 }, "FlushAt"},
		{"FlushAt 0", func(c *Client) { c.FlushAt, c.Size = 0, 0 }, "FlushAt"},
		{"negative MaxRetries", func(c *Client) { c.MaxRetries = -1 }, "MaxRetries"},
		{"zero FlushAfter", func(c *Client) { c.FlushAfter = 0 }, "FlushAfter"},
		{"RetryMax below RetryMin", func(c *Client) { c.RetryMin, c.RetryMax = time.Second, time.Millisecond }, "RetryMin/RetryMax"},
		{"MaxInFlight 0", func(c *Client) { c.MaxInFlight = 0 }, "MaxInFlight"},
		{"Endpoint not a URL", func(c *Client) { c.Endpoint = "localhost:8080" }, "Endpoint"},
		{"Endpoint ftp", func(c *Client) { c.Endpoint = "ftp://x.test" }, "Endpoint"},
		{"Endpoint with query", func(c *Client) { c.Endpoint = "http://x.test/?a=1" }, "Endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New("k")
			tc.setup(c)
			err := c.Track(&Track{UserId: "u", Event: "e"})
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || ce.Code() != CodeInvalidConfig {
				t.Fatalf("got %v, want ConfigError on %s", err, tc.field)
			}
			if err := c.Close(); !errors.As(err, &ce) {
				t.Fatalf("Close: %v", err)
			}
		})
	}
	if err := New("").Identify(&Identify{UserId: "u"}); err == nil || !strings.Contains(err.Error(), "writeKey") {
		t.Fatalf("empty write key: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	t.Setenv("DEBUG", "")
	c := New("k")
	if c.Endpoint != "http://localhost:8080" || c.FlushAt != 20 || c.Size != 20 || c.FlushAfter != 5*time.Second ||
		c.MaxRetries != 10 || c.RetryMin != 100*time.Millisecond || c.RetryMax != 10*time.Second ||
		c.Timeout != 15*time.Second || c.MaxInFlight != 4 || c.MaxQueueSize != 100000 || c.Verbose {
		t.Fatalf("defaults: %+v", c)
	}
	t.Setenv("DEBUG", "express,analytics")
	if !New("k").Verbose {
		t.Fatal("DEBUG=analytics should turn Verbose on")
	}
}

func TestQueueFull(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAfter = time.Hour
	c.FlushAt = 100
	c.MaxQueueSize = 3
	for i := 0; i < 3; i++ {
		if err := c.Identify(&Identify{UserId: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Identify(&Identify{UserId: "u"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("got %v, want ErrQueueFull", err)
	}
}
