package analytics

import (
	"errors"
	"fmt"
)

// Error codes, stable across the Go and TypeScript clients.
const (
	CodeInvalidConfig    = "invalid_option"
	CodeInvalidMessage   = "invalid_message"
	CodeMessageTooLarge  = "message_too_large"
	CodeClientClosed     = "client_closed"
	CodeQueueFull        = "queue_full"
	CodeBatchRejected    = "batch_rejected"
	CodeRetriesExhausted = "retries_exhausted"
)

var (
	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("analytics: the client is closed")
	// ErrQueueFull is returned by a call when MaxQueueSize messages are already waiting.
	ErrQueueFull = errors.New("analytics: the queue is full")
)

// ConfigError reports an invalid Client field. Every call returns it until the client is
// replaced; fields are read once, at the first call.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("analytics: %s %s", e.Field, e.Reason) }

// Code returns CodeInvalidConfig.
func (e *ConfigError) Code() string { return CodeInvalidConfig }

// ValidationError reports a call that lacks a required field or has an invalid one.
type ValidationError struct {
	Type   string // message type: identify, track, ...
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("analytics: %s: %s %s", e.Type, e.Field, e.Reason)
}

// Code returns CodeInvalidMessage.
func (e *ValidationError) Code() string { return CodeInvalidMessage }

// MessageTooLargeError reports a call that serialises to more than MaxMessageBytes.
type MessageTooLargeError struct {
	Bytes int
	Limit int
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("analytics: message is %d bytes serialised; the limit is %d", e.Bytes, e.Limit)
}

// Code returns CodeMessageTooLarge.
func (e *MessageTooLargeError) Code() string { return CodeMessageTooLarge }

// DeliveryError reports a batch that could not be delivered; Callback.Failure receives it for
// each message of the batch.
type DeliveryError struct {
	// ErrCode is CodeBatchRejected (a status that is never retried) or CodeRetriesExhausted.
	ErrCode string
	// Status of the last response; 0 when the last attempt got no response.
	Status int
	// Attempts made.
	Attempts int
	// Body is the start (at most 1 KB) of the last response body.
	Body string
	// Err is the last network error, if the last attempt failed that way.
	Err error
}

func (e *DeliveryError) Error() string {
	switch {
	case e.ErrCode == CodeBatchRejected && e.Body != "":
		return fmt.Sprintf("analytics: server rejected the batch with HTTP %d: %s", e.Status, e.Body)
	case e.ErrCode == CodeBatchRejected:
		return fmt.Sprintf("analytics: server rejected the batch with HTTP %d", e.Status)
	case e.Status != 0:
		return fmt.Sprintf("analytics: batch not delivered after %d attempts (last: HTTP %d)", e.Attempts, e.Status)
	default:
		return fmt.Sprintf("analytics: batch not delivered after %d attempts (last: %v)", e.Attempts, e.Err)
	}
}

// Code returns ErrCode.
func (e *DeliveryError) Code() string { return e.ErrCode }

// Unwrap returns the last network error, if any.
func (e *DeliveryError) Unwrap() error { return e.Err }
