package analytics

import (
	"net"
	"net/http"
	"time"
)

// HTTPDoer sends one request; *http.Client satisfies it. Tests and callers swap it through
// Client.HTTPClient.
type HTTPDoer interface {
	Do(req *http.Request) (*http.Response, error)
}

// NewHTTPClient returns the client's default HTTP client: keep-alive connections sized for
// maxInFlight concurrent batches, redirects not followed (a 3xx is a failure, not retried).
func NewHTTPClient(maxInFlight int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        maxInFlight,
			MaxIdleConnsPerHost: maxInFlight,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
