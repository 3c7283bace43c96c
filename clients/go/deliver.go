package analytics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

const keptBodyBytes = 1024

// deliverer sends batches: one request per attempt, retried by the rules of classifyAttempt
// with the waits of backoffDelay. Its clock, sleep and randomness are injectable.
type deliverer struct {
	http       HTTPDoer
	url        string
	auth       string
	timeout    time.Duration
	maxRetries int
	retryMin   time.Duration
	retryMax   time.Duration
	now        func() time.Time
	sleep      func(time.Duration)
	random     func() float64
	log        logger
}

// deliver sends one batch until it succeeds (nil), fails permanently or runs out of retries
// (*DeliveryError). Each attempt gets a fresh sentAt.
func (d *deliverer) deliver(messages [][]byte) *DeliveryError {
	for attempt := 1; ; attempt++ {
		body := renderBatchBody(messages, FormatTimestamp(d.now()))
		status, retryAfter, respBody, err := d.attempt(body)
		v, wait, hasWait := classifyAttempt(status, retryAfter, d.now())
		if v == verdictSuccess {
			d.log.debugf("sent batch of %d messages (%d bytes, attempt %d)", len(messages), len(body), attempt)
			return nil
		}
		what := fmt.Sprintf("HTTP %d", status)
		if status == 0 {
			what = "network error: " + err.Error()
		}
		switch {
		case v == verdictFail:
			d.log.debugf("batch of %d messages rejected with HTTP %d; not retried", len(messages), status)
			return &DeliveryError{ErrCode: CodeBatchRejected, Status: status, Attempts: attempt, Body: respBody}
		case attempt > d.maxRetries:
			d.log.debugf("batch of %d messages failed after %d attempts (%s)", len(messages), attempt, what)
			return &DeliveryError{ErrCode: CodeRetriesExhausted, Status: status, Attempts: attempt, Body: respBody, Err: err}
		}
		if !hasWait {
			wait = backoffDelay(attempt-1, d.retryMin, d.retryMax, d.random)
		}
		d.log.debugf("attempt %d for batch of %d messages failed (%s); retrying in %v", attempt, len(messages), what, wait)
		d.sleep(wait)
	}
}

// attempt makes one request. status is 0 when there was no response (err says why).
func (d *deliverer) attempt(body []byte) (status int, retryAfter, respBody string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", d.auth)
	req.Header.Set("User-Agent", LibraryName+"/"+Version)
	res, err := d.http.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	kept, _ := io.ReadAll(io.LimitReader(res.Body, keptBodyBytes))
	// Drain (bounded) so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, res.Header.Get("Retry-After"), string(kept), nil
}
