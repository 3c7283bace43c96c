// Package analytics is the Sluice tracking client for Go, with the API of the Segment Go
// library v2: calls queue in memory and are sent in batches, in the background, to
// POST {Endpoint}/v1/batch.
//
//	client := analytics.New("WRITE_KEY")
//	client.Endpoint = "https://ingest.example.com"
//	defer client.Close()
//
//	err := client.Track(&analytics.Track{
//		UserId:     "user-1",
//		Event:      "Order Completed",
//		Properties: map[string]interface{}{"total": 42.5},
//	})
//
// A call validates its message and returns an error at once when it is invalid or over
// 32,000 bytes serialised; otherwise it only queues. A batch leaves when FlushAt messages are
// queued, when a queued message has waited FlushAfter, on Flush and on Close. Network errors,
// 5xx and 429 are retried with exponential backoff and jitter; other 4xx are not. Delivery
// outcomes reach the Callback. DEBUG=analytics turns logging on.
package analytics
