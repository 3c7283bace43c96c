package analytics

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

type verdict int

const (
	verdictSuccess verdict = iota
	verdictRetry
	verdictFail
)

// classifyAttempt decides what follows one attempt (docs/reference/clients.md): 2xx succeeds; a network error
// (status 0), 5xx and 429 are retried, honouring Retry-After when present (wait ≥ 0, ok
// true); every other status fails at once.
func classifyAttempt(status int, retryAfter string, now time.Time) (v verdict, wait time.Duration, ok bool) {
	switch {
	case status == 0:
		return verdictRetry, 0, false
	case status >= 200 && status < 300:
		return verdictSuccess, 0, false
	case status == http.StatusTooManyRequests || (status >= 500 && status < 600):
		wait, ok = parseRetryAfter(retryAfter, now)
		return verdictRetry, wait, ok
	default:
		return verdictFail, 0, false
	}
}

// parseRetryAfter reads delta-seconds or an HTTP date, capped at MaxRetryAfterWait.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	text := strings.TrimSpace(value)
	if text == "" {
		return 0, false
	}
	var wait time.Duration
	if secs, err := strconv.ParseUint(text, 10, 32); err == nil {
		wait = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(text); err == nil {
		wait = at.Sub(now)
		if wait < 0 {
			wait = 0
		}
	} else {
		return 0, false
	}
	if wait > MaxRetryAfterWait {
		wait = MaxRetryAfterWait
	}
	return wait, true
}
