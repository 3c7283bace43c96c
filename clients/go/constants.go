package analytics

import "time"

// Library identity, sent as context.library on every message and on every batch.
const (
	LibraryName = "sluice-analytics-go"
	Version     = "0.1.0"
)

// Defaults of the Client fields (set by New).
const (
	DefaultEndpoint     = "http://localhost:8080"
	DefaultFlushAt      = 20
	DefaultFlushAfter   = 5 * time.Second
	DefaultMaxRetries   = 10
	DefaultRetryMin     = 100 * time.Millisecond
	DefaultRetryMax     = 10 * time.Second
	DefaultTimeout      = 15 * time.Second
	DefaultMaxInFlight  = 4
	DefaultMaxQueueSize = 100000
)

// Limits of the wire format (docs/reference/limits.md; KB = 1,000 bytes).
const (
	MaxMessageBytes   = 32000  // one serialised message
	MaxBatchBytes     = 500000 // one request body
	MaxBatchMessages  = 2500   // messages in one request
	MaxRetryAfterWait = 60 * time.Second
)

const batchPath = "/v1/batch"

// debugNamespace is the DEBUG value that turns logging on.
const debugNamespace = "analytics"
