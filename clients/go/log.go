package analytics

import (
	"log"
	"strings"
)

// debugEnabled says whether a DEBUG value turns logging on, following the conventions of the
// debug package: a comma or space separated list naming analytics, analytics*, analytics:* or *.
func debugEnabled(value string) bool {
	for _, name := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if name == "*" || name == debugNamespace || name == debugNamespace+"*" || name == debugNamespace+":*" {
			return true
		}
	}
	return false
}

// logger writes "analytics: ..." lines through a *log.Logger, or log.Printf when it is nil.
type logger struct {
	verbose bool
	out     *log.Logger
}

// debugf logs only when verbose.
func (l logger) debugf(format string, args ...interface{}) {
	if l.verbose {
		l.printf(format, args...)
	}
}

// printf always logs (used for delivery failures nobody else hears about).
func (l logger) printf(format string, args ...interface{}) {
	if l.out != nil {
		l.out.Printf(debugNamespace+": "+format, args...)
	} else {
		log.Printf(debugNamespace+": "+format, args...)
	}
}
