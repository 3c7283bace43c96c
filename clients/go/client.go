package analytics

import (
	"encoding/base64"
	"log"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Client queues calls and sends them in batches to POST {Endpoint}/v1/batch in the background.
// Create it with New, set fields before the first call (they are read once, then), and Close
// it before the program exits. All methods are safe for concurrent use.
type Client struct {
	// Endpoint is the base URL of the Sluice ingest service (it may include a path prefix).
	// Default: DefaultEndpoint (http://localhost:8080).
	Endpoint string
	// FlushAt: flush as soon as this many messages are queued; 1 sends every call right away.
	// Default: 20.
	FlushAt int
	// Size is the v2 name of FlushAt: the one that differs from the default wins; both changed
	// to different values is a ConfigError. Default: 20.
	Size int
	// FlushAfter: a queued message waits at most this long before it is sent. Default: 5s.
	FlushAfter time.Duration
	// MaxRetries: retries of a batch after its first attempt, on network errors, 5xx and 429;
	// 0 disables retries. Default: 10.
	MaxRetries int
	// RetryMin: backoff before the first retry, doubled per retry, with jitter. Default: 100ms.
	RetryMin time.Duration
	// RetryMax: upper bound of one backoff wait. A server's Retry-After is honoured instead (up
	// to MaxRetryAfterWait, 60s). Default: 10s.
	RetryMax time.Duration
	// Timeout: deadline of one HTTP attempt; a timeout is retried like a network error.
	// Default: 15s.
	Timeout time.Duration
	// MaxInFlight: batches sent at the same time. Default: 4.
	MaxInFlight int
	// MaxQueueSize: messages that may wait in memory; further calls return ErrQueueFull.
	// Default: 100000.
	MaxQueueSize int
	// Callback, when set, is told the fate of every message. Without it, delivery failures
	// are logged even when Verbose is off. Default: nil.
	Callback Callback
	// Verbose enables log lines. Default: true when the DEBUG environment variable names
	// analytics (DEBUG=analytics).
	Verbose bool
	// Logger receives log lines. Default: nil, meaning log.Printf (the standard logger).
	Logger *log.Logger
	// HTTPClient sends the batches. Default: NewHTTPClient(MaxInFlight).
	HTTPClient HTTPDoer

	writeKey string
	now      func() time.Time

	startOnce sync.Once
	cfg       config
	cfgErr    error
	dispatch  *dispatcher
}

// New returns a client for the source with the given write key, with every field at its
// default.
func New(writeKey string) *Client {
	return &Client{
		Endpoint:     DefaultEndpoint,
		FlushAt:      DefaultFlushAt,
		Size:         DefaultFlushAt,
		FlushAfter:   DefaultFlushAfter,
		MaxRetries:   DefaultMaxRetries,
		RetryMin:     DefaultRetryMin,
		RetryMax:     DefaultRetryMax,
		Timeout:      DefaultTimeout,
		MaxInFlight:  DefaultMaxInFlight,
		MaxQueueSize: DefaultMaxQueueSize,
		Verbose:      debugEnabled(os.Getenv("DEBUG")),
		writeKey:     writeKey,
		now:          time.Now,
	}
}

// Identify queues an identify call. It returns a *ValidationError, *MessageTooLargeError,
// ErrQueueFull, ErrClosed or *ConfigError, and then queues nothing.
func (c *Client) Identify(msg *Identify) error { return c.enqueue(msg) }

// Track queues a track call; Event is required. Errors as for Identify.
func (c *Client) Track(msg *Track) error { return c.enqueue(msg) }

// Page queues a page call; page fields go under "properties". Errors as for Identify.
func (c *Client) Page(msg *Page) error { return c.enqueue(msg) }

// Screen queues a screen call. Errors as for Identify.
func (c *Client) Screen(msg *Screen) error { return c.enqueue(msg) }

// Group queues a group call; GroupId is required. Errors as for Identify.
func (c *Client) Group(msg *Group) error { return c.enqueue(msg) }

// Alias queues an alias call; UserId and PreviousId are required. Errors as for Identify.
func (c *Client) Alias(msg *Alias) error { return c.enqueue(msg) }

// Flush sends everything queued so far and returns once all of it is delivered or reported
// as failed (through Callback). It returns an error only for an invalid configuration.
func (c *Client) Flush() error {
	if err := c.start(); err != nil {
		return err
	}
	c.dispatch.flush()
	return nil
}

// Close refuses further calls (they return ErrClosed), flushes everything queued, waits for
// every batch in flight (with its retries), then stops the timer and releases idle
// connections. Calling it again waits for the first Close and returns nil.
func (c *Client) Close() error {
	if err := c.start(); err != nil {
		return err
	}
	c.dispatch.close()
	if hc, ok := c.cfg.http.(*http.Client); ok && c.HTTPClient == nil {
		hc.CloseIdleConnections()
	}
	return nil
}

func (c *Client) enqueue(msg Message) error {
	if err := c.start(); err != nil {
		return err
	}
	built, err := buildMessage(msg, c.now(), newUUID)
	if err != nil {
		return err
	}
	return c.dispatch.enqueue(built)
}

// config is the client's fields after defaults and checks, frozen at the first call.
type config struct {
	flushAt      int
	flushAfter   time.Duration
	maxInFlight  int
	maxQueueSize int
	http         HTTPDoer
}

func (c *Client) start() error {
	c.startOnce.Do(func() {
		c.cfg, c.cfgErr = c.resolve()
		if c.cfgErr != nil {
			return
		}
		log := logger{verbose: c.Verbose, out: c.Logger}
		random := rand.New(rand.NewSource(time.Now().UnixNano()))
		var randomMu sync.Mutex
		d := &deliverer{
			http:       c.cfg.http,
			url:        strings.TrimRight(c.Endpoint, "/") + batchPath,
			auth:       "Basic " + base64.StdEncoding.EncodeToString([]byte(c.writeKey+":")),
			timeout:    c.Timeout,
			maxRetries: c.MaxRetries,
			retryMin:   c.RetryMin,
			retryMax:   c.RetryMax,
			now:        c.now,
			sleep:      time.Sleep,
			random: func() float64 {
				randomMu.Lock()
				defer randomMu.Unlock()
				return random.Float64()
			},
			log: log,
		}
		c.dispatch = newDispatcher(c.cfg, d, c.Callback, log)
	})
	return c.cfgErr
}

func (c *Client) resolve() (config, error) {
	cfg := config{flushAfter: c.FlushAfter, maxInFlight: c.MaxInFlight, maxQueueSize: c.MaxQueueSize, http: c.HTTPClient}
	if c.writeKey == "" {
		return cfg, &ConfigError{Field: "writeKey", Reason: "must not be empty"}
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, &ConfigError{Field: "Endpoint", Reason: "must be an http or https URL: " + c.Endpoint}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return cfg, &ConfigError{Field: "Endpoint", Reason: "must not have a query or fragment"}
	}
	switch {
	case c.FlushAt == c.Size, c.Size == DefaultFlushAt:
		cfg.flushAt = c.FlushAt
	case c.FlushAt == DefaultFlushAt:
		cfg.flushAt = c.Size
	default:
		return cfg, &ConfigError{Field: "FlushAt", Reason: "and Size are the same setting; set one of them"}
	}
	checks := []struct {
		ok          bool
		field, rule string
	}{
		{cfg.flushAt >= 1, "FlushAt", "must be ≥ 1"},
		{c.FlushAfter > 0, "FlushAfter", "must be > 0"},
		{c.MaxRetries >= 0, "MaxRetries", "must be ≥ 0"},
		{c.RetryMin >= 0 && c.RetryMax >= c.RetryMin, "RetryMin/RetryMax", "must satisfy 0 ≤ RetryMin ≤ RetryMax"},
		{c.Timeout > 0, "Timeout", "must be > 0"},
		{c.MaxInFlight >= 1, "MaxInFlight", "must be ≥ 1"},
		{c.MaxQueueSize >= 1, "MaxQueueSize", "must be ≥ 1"},
	}
	for _, check := range checks {
		if !check.ok {
			return cfg, &ConfigError{Field: check.field, Reason: check.rule}
		}
	}
	if cfg.http == nil {
		cfg.http = NewHTTPClient(c.MaxInFlight)
	}
	return cfg, nil
}
