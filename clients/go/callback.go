package analytics

// Callback is told the fate of every message that was queued (like analytics-go v3). Its
// methods run on the client's sending goroutines, before Flush or Close return; keep them
// short and safe for concurrent use. Set it in Client.Callback before the first call.
type Callback interface {
	// Success is called once the batch holding msg was accepted (HTTP 2xx).
	Success(msg Message)
	// Failure is called when the batch holding msg was rejected (4xx other than 429) or ran
	// out of retries; err is a *DeliveryError.
	Failure(msg Message, err error)
}
