package analytics

import (
	"bytes"
	"encoding/json"
)

var batchContextJSON, _ = json.Marshal(map[string]interface{}{"library": libraryInfo})

// renderBatchBody frames serialised messages as the body of POST /v1/batch:
// {"batch":[...],"sentAt":"<ISO>","context":{"library":{...}}}. Messages are serialised once,
// at the call; only sentAt changes between attempts.
func renderBatchBody(messages [][]byte, sentAt string) []byte {
	size := 256 + len(messages)
	for _, m := range messages {
		size += len(m)
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(`{"batch":[`)
	for i, m := range messages {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m)
	}
	b.WriteString(`],"sentAt":"`)
	b.WriteString(sentAt)
	b.WriteString(`","context":`)
	b.Write(batchContextJSON)
	b.WriteByte('}')
	return b.Bytes()
}

// batchOverheadBytes is the size of a body with no messages; sentAt is always 24 bytes.
var batchOverheadBytes = len(renderBatchBody(nil, "2000-01-01T00:00:00.000Z"))

// nextBatchSize says how many of n queued messages (oldest first; size(i) is the i-th one's
// length) go into the next request: it takes messages while the next one still fits in
// maxBytes (counting overhead and one comma between messages) and maxMessages, so a batch is
// split only when the next message would overflow. It takes at least one message when n > 0.
func nextBatchSize(n int, size func(i int) int, overhead, maxBytes, maxMessages int) int {
	total, count := overhead, 0
	for i := 0; i < n && count < maxMessages; i++ {
		next := total + size(i)
		if count > 0 {
			next++
		}
		if next > maxBytes && count > 0 {
			break
		}
		total = next
		count++
	}
	return count
}
