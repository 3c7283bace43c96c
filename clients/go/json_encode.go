package analytics

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// A fast path for the JSON of a call. encoding/json reflects over every map entry, which made
// it most of the cost of a call; the common value types (the ones JSON decoding produces,
// plus Go's integer types and string maps/slices) are written here directly, byte for byte as
// encoding/json with SetEscapeHTML(false) writes them (a test compares the two). Anything else
// falls back to encoding/json.

// appendWireMessage writes w in the shared key order, omitting empty fields.
func appendWireMessage(b []byte, w *wireMessage) ([]byte, error) {
	var err error
	b = append(b, `{"type":`...)
	b = appendString(b, w.Type)
	b = append(b, `,"messageId":`...)
	b = appendString(b, w.MessageId)
	b = append(b, `,"timestamp":`...)
	b = appendString(b, w.Timestamp)
	b = appendStringField(b, "userId", w.UserId)
	b = appendStringField(b, "anonymousId", w.AnonymousId)
	b = append(b, `,"context":`...)
	if b, err = appendContext(b, w.Context); err != nil {
		return b, err
	}
	if b, err = appendMapField(b, "integrations", w.Integrations); err != nil {
		return b, err
	}
	b = appendStringField(b, "event", w.Event)
	if b, err = appendMapField(b, "properties", w.Properties); err != nil {
		return b, err
	}
	if b, err = appendMapField(b, "traits", w.Traits); err != nil {
		return b, err
	}
	b = appendStringField(b, "name", w.Name)
	b = appendStringField(b, "category", w.Category)
	b = appendStringField(b, "groupId", w.GroupId)
	b = appendStringField(b, "previousId", w.PreviousId)
	return append(b, '}'), nil
}

func appendStringField(b []byte, key, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

func appendMapField(b []byte, key string, m map[string]interface{}) ([]byte, error) {
	if len(m) == 0 {
		return b, nil
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendMap(b, m)
}

var libraryJSON, _ = json.Marshal(libraryInfo)

// appendContext writes the caller's context with "library" set to this client's, without
// copying the caller's map.
func appendContext(b []byte, ctx map[string]interface{}) ([]byte, error) {
	keys := make([]string, 0, len(ctx)+1)
	keys = append(keys, "library")
	for k := range ctx {
		if k != "library" {
			keys = append(keys, k)
		}
	}
	return appendSortedObject(b, keys, func(b []byte, k string) ([]byte, error) {
		if k == "library" {
			return append(b, libraryJSON...), nil
		}
		return appendValue(b, ctx[k])
	})
}

func appendMap(b []byte, m map[string]interface{}) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return appendSortedObject(b, keys, func(b []byte, k string) ([]byte, error) { return appendValue(b, m[k]) })
}

// appendSortedObject writes a JSON object of keys in sorted order (as encoding/json does for
// maps), each value written by value.
func appendSortedObject(b []byte, keys []string, value func(b []byte, k string) ([]byte, error)) ([]byte, error) {
	sort.Strings(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if b, err = value(b, k); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendValue(b []byte, v interface{}) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case map[string]interface{}:
		return appendMap(b, x)
	case []interface{}:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case []string:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		return append(b, ']'), nil
	default:
		return appendWithEncodingJSON(b, v)
	}
}

func appendWithEncodingJSON(b []byte, v interface{}) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// appendFloat follows encoding/json: shortest representation, exponent form outside
// [1e-6, 1e21), NaN and infinities refused.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off: control characters,
// quote and backslash escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
