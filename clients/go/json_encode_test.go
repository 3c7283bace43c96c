package analytics

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"testing"
	"time"
)

// stdJSON is what encoding/json writes with HTML escaping off: the reference for the fast path.
func stdJSON(t *testing.T, v interface{}) (string, bool) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})), true
}

func TestFastJSONMatchesEncodingJSON(t *testing.T) {
	type custom struct {
		A int `json:"a"`
	}
	values := []interface{}{
		nil, true, false, "", "plain", "quote\" backslash\\ slash/", "<html> & 'amp'", "tab\tnl\ncr\rbs\bff\f",
		"\x00\x01\x1f\x7f", "bad utf8 \xff\xfe end", "line sep \u2028 para \u2029", "émoji 🎉 中文",
		0.0, math.Copysign(0, -1), 1.0, -1.5, 42.5, 1e-6, 1e-7, 1.234e-9, 1e20, 1e21, 123456789.123456789, math.MaxFloat64, math.SmallestNonzeroFloat64,
		float32(0.1), float32(1e-7), float32(3.4e38), float32(1e21),
		0, -7, math.MaxInt64, int64(math.MinInt64), int32(-5), uint(7), uint64(math.MaxUint64), uint32(9),
		[]interface{}{}, []interface{}(nil), []interface{}{1.0, "a", nil, map[string]interface{}{"z": 1, "a": 2}},
		[]string{"a", "b\n"}, []string(nil),
		map[string]interface{}{}, map[string]interface{}(nil), map[string]interface{}{"b": 1, "a": map[string]interface{}{"\n": "x", "é": []interface{}{true}}},
		map[string]string{"k": "v"}, time.Date(2026, 11, 21, 23, 34, 15, 123e6, time.UTC), json.Number("12.50"), custom{A: 3}, &custom{A: 4},
		[]int{1, 2}, int8(-3), uint16(300),
	}
	for _, v := range values {
		want, ok := stdJSON(t, v)
		got, err := appendValue(nil, v)
		if !ok {
			if err == nil {
				t.Errorf("%#v: encoding/json fails, fast path gave %s", v, got)
			}
			continue
		}
		if err != nil || string(got) != want {
			t.Errorf("%#v:\n got %s (%v)\nwant %s", v, got, err, want)
		}
	}
	for _, bad := range []interface{}{math.NaN(), math.Inf(1), float32(math.Inf(-1)), func() {}, map[string]interface{}{"f": make(chan int)}} {
		if _, err := appendValue(nil, bad); err == nil {
			t.Errorf("%T accepted", bad)
		}
	}
}

func TestFastJSONMatchesEncodingJSONOnRandomValues(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	runes := []rune{'a', 'Z', ' ', '"', '\\', '/', '<', '&', '\n', '\t', 0, 0x1f, 'é', '中', '🎉', '\u2028', 0x7f}
	randString := func() string {
		var b []byte
		for i := r.Intn(8); i > 0; i-- {
			if r.Intn(20) == 0 {
				b = append(b, 0xff) // invalid UTF-8
			} else {
				b = append(b, string(runes[r.Intn(len(runes))])...)
			}
		}
		return string(b)
	}
	var randValue func(depth int) interface{}
	randValue = func(depth int) interface{} {
		switch k := r.Intn(9); {
		case k == 0:
			return nil
		case k == 1:
			return r.Intn(2) == 0
		case k == 2:
			return randString()
		case k == 3:
			return (r.Float64() - 0.5) * math.Pow(10, float64(r.Intn(50)-25))
		case k == 4:
			return r.Int63() - r.Int63()
		case k == 5 && depth < 3:
			m := map[string]interface{}{}
			for i := r.Intn(5); i > 0; i-- {
				m[randString()] = randValue(depth + 1)
			}
			return m
		case k == 6 && depth < 3:
			var a []interface{}
			for i := r.Intn(4); i > 0; i-- {
				a = append(a, randValue(depth+1))
			}
			return a
		default:
			return float64(r.Intn(1000)) / 8
		}
	}
	for i := 0; i < 5000; i++ {
		v := randValue(0)
		want, _ := stdJSON(t, v)
		got, err := appendValue(nil, v)
		if err != nil || string(got) != want {
			t.Fatalf("%#v:\n got %s (%v)\nwant %s", v, got, err, want)
		}
	}
}

func TestWireMessageMatchesEncodingJSON(t *testing.T) {
	messages := []wireMessage{
		{Type: "alias", MessageId: "m", Timestamp: "2026-11-21T23:34:15.123Z", UserId: "u", PreviousId: "p"},
		{Type: "track", MessageId: "m", Timestamp: "t", AnonymousId: "a", Event: "E <&>", Context: map[string]interface{}{"ip": "1.2.3.4", "library": "caller's", "app": map[string]interface{}{"v": 1}},
			Integrations: map[string]interface{}{"All": false}, Properties: map[string]interface{}{"x": []interface{}{1, "2"}}},
		{Type: "page", MessageId: "m", Timestamp: "t", UserId: "u", Name: "n", Category: "c", Properties: map[string]interface{}{}},
		{Type: "group", MessageId: "m", Timestamp: "t", UserId: "u", GroupId: "g", Traits: map[string]interface{}{"n": 1}},
	}
	for _, w := range messages {
		merged := map[string]interface{}{}
		for k, v := range w.Context {
			merged[k] = v
		}
		merged["library"] = libraryInfo
		ref := w
		ref.Context = merged
		want, _ := stdJSON(t, &ref)
		got, err := appendWireMessage(nil, &w)
		if err != nil || string(got) != want {
			t.Errorf("\n got %s (%v)\nwant %s", got, err, want)
		}
	}
}
