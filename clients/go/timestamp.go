package analytics

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Date, then optional time with optional seconds and fraction, then a zone (Z, ±hh, ±hhmm or
// ±hh:mm). A time without a zone is ambiguous and refused.
var iso8601 = regexp.MustCompile(
	`^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?))?$`)

const wireTimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTimestamp renders t the way the client sends every timestamp: ISO 8601, UTC,
// milliseconds, Z (2026-11-21T23:34:15.123Z).
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format(wireTimeLayout)
}

// parseTimestamp reads ISO 8601 in any common form; ok is false when text is not one.
func parseTimestamp(text string) (t time.Time, ok bool) {
	m := iso8601.FindStringSubmatch(text)
	if m == nil {
		return time.Time{}, false
	}
	num := func(s, fallback string) int {
		if s == "" {
			s = fallback
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	year, month, day := num(m[1], ""), num(m[2], ""), num(m[3], "")
	hour, minute, second := num(m[4], "0"), num(m[5], "0"), num(m[6], "0")
	frac := m[7]
	if len(frac) > 3 {
		frac = frac[:3]
	}
	millis := num((frac + "000")[:3], "0")
	if month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, second, millis*int(time.Millisecond), time.UTC)
	if t.Day() != day { // 31 February rolls over into March
		return time.Time{}, false
	}
	return t.Add(-zoneOffset(m[8])), true
}

func zoneOffset(zone string) time.Duration {
	if zone == "" || zone == "Z" || zone == "z" {
		return 0
	}
	sign := time.Duration(1)
	if zone[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(zone[1:], ":", "")
	hours, _ := strconv.Atoi(digits[:2])
	minutes := 0
	if len(digits) > 2 {
		minutes, _ = strconv.Atoi(digits[2:])
	}
	return sign * (time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute)
}
