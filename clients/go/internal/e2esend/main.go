// Command e2esend sends one message of every type through the Go client to a real ingest, for the
// end-to-end test test/e2e/clients.e2e.test.ts. Usage: e2esend <endpoint> <writeKey> <runId>
package main

import (
	"fmt"
	"os"

	analytics "github.com/sluice-oss/sluice/clients/go"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: e2esend <endpoint> <writeKey> <runId>")
		os.Exit(2)
	}
	endpoint, writeKey, run := os.Args[1], os.Args[2], os.Args[3]
	client := analytics.New(writeKey)
	client.Endpoint = endpoint
	user := "go-user-" + run
	calls := []error{
		client.Identify(&analytics.Identify{UserId: user, MessageId: run + "-identify", Traits: map[string]interface{}{"plan": "pro"}}),
		client.Track(&analytics.Track{UserId: user, MessageId: run + "-track", Event: "Order Completed", Properties: map[string]interface{}{"total": 42.5}}),
		client.Page(&analytics.Page{UserId: user, MessageId: run + "-page", Name: "Pricing", Traits: map[string]interface{}{"url": "https://example.org/pricing"}}),
		client.Screen(&analytics.Screen{AnonymousId: "go-anon-" + run, MessageId: run + "-screen", Name: "Checkout"}),
		client.Group(&analytics.Group{UserId: user, MessageId: run + "-group", GroupId: "g-1", Traits: map[string]interface{}{"name": "Initech"}}),
		client.Alias(&analytics.Alias{UserId: user, MessageId: run + "-alias", PreviousId: "go-anon-" + run}),
	}
	for _, err := range calls {
		if err != nil {
			fmt.Fprintln(os.Stderr, "call refused:", err)
			os.Exit(1)
		}
	}
	if err := client.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(1)
	}
}
