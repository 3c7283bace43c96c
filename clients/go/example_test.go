package analytics_test

import (
	"errors"
	"log"
	"time"

	analytics "github.com/sluice-oss/sluice/clients/go"
)

type reporter struct{}

func (reporter) Success(msg analytics.Message) {}

func (reporter) Failure(msg analytics.Message, err error) {
	var de *analytics.DeliveryError
	if errors.As(err, &de) {
		log.Printf("lost %T: %s (HTTP %d after %d attempts)", msg, de.Code(), de.Status, de.Attempts)
	}
}

func ExampleNew() {
	client := analytics.New("WRITE_KEY")
	client.Endpoint = "https://ingest.example.com"
	client.FlushAt = 50
	client.FlushAfter = 2 * time.Second
	client.Callback = reporter{}
	defer client.Close()

	if err := client.Track(&analytics.Track{
		UserId:     "user-1",
		Event:      "Order Completed",
		Properties: map[string]interface{}{"total": 42.5, "currency": "EUR"},
	}); err != nil {
		log.Printf("not queued: %v", err)
	}
	client.Identify(&analytics.Identify{UserId: "user-1", Traits: map[string]interface{}{"plan": "pro"}})
	client.Page(&analytics.Page{AnonymousId: "anon-7", Name: "Pricing", Category: "Docs",
		Traits: map[string]interface{}{"url": "https://example.com/pricing"}})
	client.Screen(&analytics.Screen{UserId: "user-1", Name: "Home"})
	client.Group(&analytics.Group{UserId: "user-1", GroupId: "acme", Traits: map[string]interface{}{"seats": 12}})
	client.Alias(&analytics.Alias{UserId: "user-1", PreviousId: "anon-7"})
	client.Track(&analytics.Track{
		UserId:       "user-1",
		Event:        "Signed Up",
		Timestamp:    "2015-02-03T08:24:14-0800",
		Integrations: map[string]interface{}{"All": false, "Webhooks": true},
	})
}
