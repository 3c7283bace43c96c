package analytics

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// assertTightBatches checks every request ≤ MaxBatchBytes and ≤ MaxBatchMessages, and that each
// but the last could not have taken the first message of the next one.
func assertTightBatches(t *testing.T, reqs []received) {
	t.Helper()
	for i, r := range reqs {
		if r.Bytes > MaxBatchBytes || len(r.Body.Batch) > MaxBatchMessages {
			t.Fatalf("request %d: %d bytes, %d messages", i, r.Bytes, len(r.Body.Batch))
		}
		if i == len(reqs)-1 {
			continue
		}
		next, _ := json.Marshal(reqs[i+1].Body.Batch[0])
		full := len(r.Body.Batch) == MaxBatchMessages || r.Bytes+1+len(next) > MaxBatchBytes
		if !full {
			t.Fatalf("request %d (%d B, %d messages) could have taken the next %d B message", i, r.Bytes, len(r.Body.Batch), len(next))
		}
	}
}

func TestBatchesOfTwoKBMessagesAreFullAndUnderTheLimit(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAt = 5000 // queue everything, then let Close cut the batches
	c.FlushAfter = time.Hour
	c.MaxInFlight = 1 // requests arrive in queue order
	var ids []string
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("m-%04d", i)
		ids = append(ids, id)
		pad := strings.Repeat("x", 1800+(i*37)%400)
		if err := c.Track(&Track{MessageId: id, UserId: fmt.Sprintf("user-%d", i), Event: "Bulk",
			Properties: map[string]interface{}{"pad": pad}}); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Close()
	reqs := f.snapshot()
	if len(reqs) < 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	assertTightBatches(t, reqs)
	var got []string
	for _, m := range f.messages() {
		got = append(got, m["messageId"].(string))
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatal("messages lost, repeated or reordered")
	}
}

func TestBatchesCapAt2500Messages(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAt = 10000
	c.FlushAfter = time.Hour
	c.MaxInFlight = 1
	for i := 0; i < 6000; i++ {
		_ = c.Identify(&Identify{UserId: fmt.Sprint(i)})
	}
	_ = c.Close()
	var sizes []int
	for _, r := range f.snapshot() {
		sizes = append(sizes, len(r.Body.Batch))
	}
	if fmt.Sprint(sizes) != "[2500 2500 1000]" {
		t.Fatalf("batch sizes %v", sizes)
	}
}

func TestCallOver32KBIsRefused(t *testing.T) {
	f := startIngest(t, nil)
	c := newTestClient(t, f)
	c.FlushAt = 1
	err := c.Track(&Track{UserId: "u", Event: "Huge", Properties: map[string]interface{}{"blob": strings.Repeat("z", 32000)}})
	var tooLarge *MessageTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Code() != CodeMessageTooLarge || tooLarge.Bytes <= MaxMessageBytes {
		t.Fatalf("got %v, want MessageTooLargeError", err)
	}
	_ = c.Track(&Track{UserId: "u", Event: "Small"})
	_ = c.Close()
	msgs := f.messages()
	if len(msgs) != 1 || msgs[0]["event"] != "Small" {
		t.Fatalf("delivered %v", msgs)
	}
}

func TestNextBatchSize(t *testing.T) {
	sizes := func(s ...int) (int, func(int) int) { return len(s), func(i int) int { return s[i] } }
	cases := []struct {
		name string
		s    []int
		want int
	}{
		{"exactly full: 10 + 30 + 1 + 30 + 1 + 28 = 100", []int{30, 30, 28, 1}, 3},
		{"one byte over", []int{30, 30, 29}, 2},
		{"count limit", []int{1, 1, 1, 1, 1, 1, 1}, 5},
		{"a single oversize message still goes", []int{500}, 1},
		{"empty", nil, 0},
	}
	for _, tc := range cases {
		n, size := sizes(tc.s...)
		if got := nextBatchSize(n, size, 10, 100, 5); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestBatchBodyOverhead(t *testing.T) {
	body := renderBatchBody([][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}, "2026-11-21T23:34:15.123Z")
	if len(body) != batchOverheadBytes+7+1+7 {
		t.Fatalf("body %d bytes, overhead %d", len(body), batchOverheadBytes)
	}
	var parsed map[string]interface{}
	if err := json.Unmarshal(body, &parsed); err != nil {
		t.Fatal(err)
	}
}
