package analytics

import (
	"sync"
	"time"
)

// builtMessage is a validated call: the caller's message, its id and its serialised form.
type builtMessage struct {
	msg  Message
	id   string
	json []byte
}

var libraryInfo = map[string]interface{}{"name": LibraryName, "version": Version}

var encodeBuffers = sync.Pool{New: func() interface{} { b := make([]byte, 0, 1024); return &b }}

// buildMessage validates a call and serialises it (docs/reference/clients.md). Pure apart from now and newID.
// It returns a *ValidationError or *MessageTooLargeError; nothing is queued then.
func buildMessage(m Message, now time.Time, newID func() string) (builtMessage, error) {
	if m == nil || isNilPointer(m) {
		return builtMessage{}, &ValidationError{Type: "message", Field: "message", Reason: "is nil"}
	}
	w, err := m.wire()
	if err != nil {
		return builtMessage{}, err
	}
	if w.MessageId == "" {
		w.MessageId = newID()
	}
	if w.Timestamp == "" {
		w.Timestamp = FormatTimestamp(now)
	} else if t, ok := parseTimestamp(w.Timestamp); ok {
		w.Timestamp = FormatTimestamp(t)
	} else {
		return builtMessage{}, &ValidationError{Type: w.Type, Field: "Timestamp", Reason: "is not ISO 8601: " + w.Timestamp}
	}
	bufp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bufp)
	data, err := appendWireMessage((*bufp)[:0], &w)
	*bufp = data
	if err != nil {
		return builtMessage{}, &ValidationError{Type: w.Type, Field: "message", Reason: "cannot be serialised as JSON: " + err.Error()}
	}
	if len(data) > MaxMessageBytes {
		return builtMessage{}, &MessageTooLargeError{Bytes: len(data), Limit: MaxMessageBytes}
	}
	return builtMessage{msg: m, id: w.MessageId, json: append([]byte(nil), data...)}, nil
}

func isNilPointer(m Message) bool {
	switch v := m.(type) {
	case *Identify:
		return v == nil
	case *Track:
		return v == nil
	case *Page:
		return v == nil
	case *Screen:
		return v == nil
	case *Group:
		return v == nil
	case *Alias:
		return v == nil
	}
	return false
}
