package analytics

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var (
	uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	isoMsZ = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

func TestRequestLine(t *testing.T) {
	f := startIngest(t, nil)
	c := New("my-write-key")
	c.Endpoint = f.URL
	_ = c.Identify(&Identify{UserId: "u"})
	_ = c.Close()
	r := f.snapshot()[0]
	if r.Method != "POST" || r.Path != "/v1/batch" || r.ContentType != "application/json" {
		t.Fatalf("%s %s %s", r.Method, r.Path, r.ContentType)
	}
	if r.UserAgent != LibraryName+"/"+Version {
		t.Fatalf("user agent %q", r.UserAgent)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("my-write-key:")); r.Auth != want {
		t.Fatalf("auth %q, want %q", r.Auth, want)
	}
}

func TestEndpointPathPrefix(t *testing.T) {
	f := startIngest(t, nil)
	c := New("k")
	c.Endpoint = f.URL + "/sluice/"
	_ = c.Identify(&Identify{UserId: "u"})
	_ = c.Close()
	if p := f.snapshot()[0].Path; p != "/sluice/v1/batch" {
		t.Fatalf("path %s", p)
	}
}

func TestAllSixTypesInTheSharedShape(t *testing.T) {
	f := startIngest(t, nil)
	c := New("k")
	c.Endpoint = f.URL
	at := time.Date(2026, 11, 21, 23, 34, 15, 123e6, time.UTC)
	var clock atomic.Int64 // the test's clock: calls at `at`, sends 250 ms later
	clock.Store(at.UnixNano())
	c.now = func() time.Time { return time.Unix(0, clock.Load()) }
	integrations := map[string]interface{}{"All": false, "Webhooks": true}
	calls := []func() error{
		func() error {
			return c.Identify(&Identify{UserId: "u1", Traits: map[string]interface{}{"email": "a@example.com"}, Integrations: integrations})
		},
		func() error {
			return c.Track(&Track{AnonymousId: "a1", Event: "Clicked", Properties: map[string]interface{}{"n": 1}, Timestamp: "2026-01-01T00:00:00+01:00"})
		},
		func() error {
			return c.Page(&Page{UserId: "u1", Name: "Pricing", Category: "Docs",
				Traits: map[string]interface{}{"url": "https://x.test/pricing", "path": "/old"}, Properties: map[string]interface{}{"path": "/pricing"}})
		},
		func() error {
			return c.Screen(&Screen{UserId: "u1", Name: "Home", Context: map[string]interface{}{"device": map[string]interface{}{"model": "x", "type": "ios"}}})
		},
		func() error {
			return c.Group(&Group{UserId: "u1", GroupId: "g1", Traits: map[string]interface{}{"plan": "pro"}})
		},
		func() error { return c.Alias(&Alias{UserId: "u1", PreviousId: "a1"}) },
	}
	for _, call := range calls {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	clock.Store(at.Add(250 * time.Millisecond).UnixNano())
	_ = c.Close()

	reqs := f.snapshot()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	raw := string(reqs[0].Raw)
	if !strings.HasPrefix(raw, `{"batch":[{"type":"identify","messageId":"`) {
		t.Fatalf("key order: %.80s", raw)
	}
	body := reqs[0].Body
	library := map[string]interface{}{"name": LibraryName, "version": Version}
	if body.SentAt != "2026-11-21T23:34:15.373Z" {
		t.Fatalf("sentAt %s", body.SentAt)
	}
	if !reflect.DeepEqual(body.Context, map[string]interface{}{"library": library}) {
		t.Fatalf("batch context %v", body.Context)
	}
	ts := "2026-11-21T23:34:15.123Z"
	ctx := map[string]interface{}{"library": library}
	want := []map[string]interface{}{
		{"type": "identify", "timestamp": ts, "userId": "u1", "context": ctx, "integrations": map[string]interface{}{"All": false, "Webhooks": true},
			"traits": map[string]interface{}{"email": "a@example.com"}},
		{"type": "track", "timestamp": "2025-12-31T23:00:00.000Z", "anonymousId": "a1", "context": ctx, "event": "Clicked",
			"properties": map[string]interface{}{"n": 1.0}},
		{"type": "page", "timestamp": ts, "userId": "u1", "context": ctx, "name": "Pricing", "category": "Docs",
			"properties": map[string]interface{}{"url": "https://x.test/pricing", "path": "/pricing"}},
		{"type": "screen", "timestamp": ts, "userId": "u1", "name": "Home",
			"context": map[string]interface{}{"library": library, "device": map[string]interface{}{"model": "x", "type": "ios"}}},
		{"type": "group", "timestamp": ts, "userId": "u1", "context": ctx, "groupId": "g1", "traits": map[string]interface{}{"plan": "pro"}},
		{"type": "alias", "timestamp": ts, "userId": "u1", "context": ctx, "previousId": "a1"},
	}
	ids := map[string]bool{}
	for i, m := range body.Batch {
		id, _ := m["messageId"].(string)
		if !uuidV4.MatchString(id) || !isoMsZ.MatchString(m["timestamp"].(string)) {
			t.Fatalf("message %d: id %q timestamp %v", i, id, m["timestamp"])
		}
		ids[id] = true
		delete(m, "messageId")
		if !reflect.DeepEqual(m, want[i]) {
			t.Errorf("message %d:\n got %v\nwant %v", i, m, want[i])
		}
	}
	if len(ids) != 6 {
		t.Fatal("messageIds not unique")
	}
}

func TestValidation(t *testing.T) {
	cases := []struct {
		name  string
		msg   Message
		field string
	}{
		{"identify without identity", &Identify{Traits: map[string]interface{}{"a": 1}}, "UserId or AnonymousId"},
		{"track without identity", &Track{Event: "E"}, "UserId or AnonymousId"},
		{"page without identity", &Page{Name: "Home"}, "UserId or AnonymousId"},
		{"screen without identity", &Screen{Name: "Home"}, "UserId or AnonymousId"},
		{"group without identity", &Group{GroupId: "g"}, "UserId or AnonymousId"},
		{"track without event", &Track{UserId: "u"}, "Event"},
		{"group without groupId", &Group{UserId: "u"}, "GroupId"},
		{"alias without userId", &Alias{PreviousId: "p"}, "UserId"},
		{"alias without previousId", &Alias{UserId: "u"}, "PreviousId"},
		{"bad timestamp", &Track{UserId: "u", Event: "E", Timestamp: "yesterday"}, "Timestamp"},
		{"unserialisable", &Track{UserId: "u", Event: "E", Properties: map[string]interface{}{"f": func() {}}}, "message"},
		{"nil pointer", (*Track)(nil), "message"},
	}
	for _, tc := range cases {
		_, err := buildMessage(tc.msg, time.Now(), newUUID)
		ve, ok := err.(*ValidationError)
		if !ok || ve.Field != tc.field || ve.Code() != CodeInvalidMessage {
			t.Errorf("%s: got %v, want ValidationError on %s", tc.name, err, tc.field)
		}
	}
	if _, err := buildMessage(&Track{AnonymousId: "a", Event: "E"}, time.Now(), newUUID); err != nil {
		t.Errorf("anonymousId alone: %v", err)
	}
	// Calls return the error and queue nothing.
	c := New("k")
	c.Endpoint = "http://127.0.0.1:9"
	if err := c.Track(&Track{UserId: "u"}); err == nil {
		t.Error("Track without Event accepted")
	}
	if c.dispatch.size() != 0 {
		t.Error("invalid call queued")
	}
}

func TestSizeLimitIsExactly32000Bytes(t *testing.T) {
	build := func(pad int) (builtMessage, error) {
		return buildMessage(&Track{UserId: "u", Event: "E", MessageId: "m", Properties: map[string]interface{}{"p": strings.Repeat("x", pad)}},
			time.Now(), newUUID)
	}
	base, _ := build(0)
	exact, err := build(MaxMessageBytes - len(base.json))
	if err != nil || len(exact.json) != MaxMessageBytes {
		t.Fatalf("%d bytes: %v", len(exact.json), err)
	}
	_, err = build(MaxMessageBytes - len(base.json) + 1)
	if tooLarge, ok := err.(*MessageTooLargeError); !ok || tooLarge.Bytes != MaxMessageBytes+1 {
		t.Fatalf("got %v", err)
	}
}

func TestCallerMapsAreNotModified(t *testing.T) {
	ctx := map[string]interface{}{"library": "mine", "locale": "fr"}
	b, err := buildMessage(&Identify{UserId: "u", Context: ctx}, time.Now(), newUUID)
	if err != nil {
		t.Fatal(err)
	}
	if ctx["library"] != "mine" || len(ctx) != 2 {
		t.Fatalf("caller context modified: %v", ctx)
	}
	var m map[string]interface{}
	_ = json.Unmarshal(b.json, &m)
	if m["context"].(map[string]interface{})["locale"] != "fr" {
		t.Fatal("context lost")
	}
}

func TestTimestamps(t *testing.T) {
	good := map[string]string{
		"2026-11-21T23:34:15.123Z":       "2026-11-21T23:34:15.123Z",
		"2026-11-21T23:34:15Z":           "2026-11-21T23:34:15.000Z",
		"2026-11-21T23:00:00.5Z":         "2026-11-21T23:00:00.500Z",
		"2026-11-21T23:00:00.123456789Z": "2026-11-21T23:00:00.123Z",
		"2015-02-03T08:24:14-0800":       "2015-02-03T16:24:14.000Z",
		"2026-11-21T23:00:00+01:00":      "2026-11-21T22:00:00.000Z",
		"2026-11-21T23:00:00+05":         "2026-11-21T18:00:00.000Z",
		"2026-11-21 23:00:00z":           "2026-11-21T23:00:00.000Z",
		"2026-11-21T23:00Z":              "2026-11-21T23:00:00.000Z",
		"2026-11-21":                     "2026-11-21T00:00:00.000Z",
	}
	for in, want := range good {
		got, ok := parseTimestamp(in)
		if !ok || FormatTimestamp(got) != want {
			t.Errorf("%q: got %v %v, want %s", in, FormatTimestamp(got), ok, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-11-21T23:00:00", "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21T24:00:00Z", "1700000000"} {
		if _, ok := parseTimestamp(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDebugLogging(t *testing.T) {
	for _, on := range []string{"analytics", "express,analytics", "foo analytics", "*", "analytics*", "analytics:*"} {
		if !debugEnabled(on) {
			t.Errorf("%q should enable", on)
		}
	}
	for _, off := range []string{"", "analytics-node", "express", "analyticsx"} {
		if debugEnabled(off) {
			t.Errorf("%q should not enable", off)
		}
	}

	f := startIngest(t, func(n int) reply {
		if n == 1 {
			return reply{Status: 500}
		}
		return reply{Status: 200}
	})
	var out bytes.Buffer
	c := newTestClient(t, f)
	c.writeKey = "secret-write-key"
	c.Verbose = true
	c.Logger = log.New(&out, "", 0)
	_ = c.Track(&Track{UserId: "u", Event: "e", MessageId: "m-1"})
	_ = c.Close()
	text := out.String()
	for _, want := range []string{"analytics: queued m-1", "(HTTP 500); retrying in", "analytics: sent batch of 1 messages"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "secret-write-key") || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte("secret-write-key:"))) {
		t.Error("write key logged")
	}
}

func TestUnhandledFailureIsLoggedEvenWhenQuiet(t *testing.T) {
	f := startIngest(t, func(int) reply { return reply{Status: 400} })
	var out bytes.Buffer
	c := newTestClient(t, f)
	c.Verbose = false
	c.Logger = log.New(&out, "", 0)
	_ = c.Track(&Track{UserId: "u", Event: "e"})
	_ = c.Close()
	if got := strings.TrimSpace(out.String()); got != "analytics: 1 messages not delivered: analytics: server rejected the batch with HTTP 400" {
		t.Fatalf("log %q", got)
	}
}
