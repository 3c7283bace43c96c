package analytics

// Message is one of *Identify, *Track, *Page, *Screen, *Group or *Alias. Callback methods
// receive the pointer that was given to the call.
type Message interface {
	// wire validates the message and returns its type-specific wire fields.
	wire() (wireMessage, error)
}

// Fields common to every message (docs/reference/clients.md):
//   - Context: extra context (ip, userAgent, app, device, ...); context.library is always set
//     by the client. The map is copied at the call, never modified.
//   - Integrations: per-destination switches (docs/reference/routing.md), e.g. {"All": false, "Webhooks": true}.
//     Default: none (every destination enabled).
//   - Timestamp: ISO 8601, for historical import; sent as UTC with milliseconds
//     (2026-11-21T23:34:15.123Z). Default: the time of the call.
//   - MessageId: default a fresh UUID v4; give your own to make a message de-duplicable.

// Each type's fields are grouped on a line by kind (maps, then strings); a struct literal names
// them as usual, e.g. analytics.Track{UserId: "u1", Event: "Signed Up"}.

// Identify says who a user is and what they are like. UserId or AnonymousId is required.
type Identify struct {
	Context, Integrations, Traits             map[string]interface{}
	AnonymousId, UserId, Timestamp, MessageId string
}

// Track records something a user did. Event and one of UserId or AnonymousId are required.
type Track struct {
	Context, Integrations, Properties                map[string]interface{}
	AnonymousId, UserId, Event, Timestamp, MessageId string
}

// Page records a web page view. UserId or AnonymousId is required. Page fields (url, title,
// referrer, path and custom keys) go on the wire under "properties"; Traits is the v2 name for
// them and is merged under Properties (Properties wins on a shared key).
type Page struct {
	Context, Integrations, Traits, Properties                 map[string]interface{}
	AnonymousId, UserId, Name, Category, Timestamp, MessageId string
}

// Screen records a mobile screen view. UserId or AnonymousId is required.
type Screen struct {
	Context, Integrations, Properties                         map[string]interface{}
	AnonymousId, UserId, Name, Category, Timestamp, MessageId string
}

// Group ties a user to a group. GroupId and one of UserId or AnonymousId are required.
type Group struct {
	Context, Integrations, Traits                      map[string]interface{}
	AnonymousId, UserId, GroupId, Timestamp, MessageId string
}

// Alias merges two identities. UserId (the new id) and PreviousId are required.
type Alias struct {
	Context, Integrations                    map[string]interface{}
	PreviousId, UserId, Timestamp, MessageId string
}

// wireMessage is one message exactly as it goes on the wire, inside "batch"; the field order
// is the shared wire format's.
type wireMessage struct {
	Type         string                 `json:"type"`
	MessageId    string                 `json:"messageId"`
	Timestamp    string                 `json:"timestamp"`
	UserId       string                 `json:"userId,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	Context      map[string]interface{} `json:"context"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Event        string                 `json:"event,omitempty"`
	Properties   map[string]interface{} `json:"properties,omitempty"`
	Traits       map[string]interface{} `json:"traits,omitempty"`
	Name         string                 `json:"name,omitempty"`
	Category     string                 `json:"category,omitempty"`
	GroupId      string                 `json:"groupId,omitempty"`
	PreviousId   string                 `json:"previousId,omitempty"`
}

func (m *Identify) wire() (wireMessage, error) {
	if err := requireIdentity("identify", m.UserId, m.AnonymousId); err != nil {
		return wireMessage{}, err
	}
	return wireMessage{
		Type: "identify", MessageId: m.MessageId, Timestamp: m.Timestamp, UserId: m.UserId, AnonymousId: m.AnonymousId,
		Context: m.Context, Integrations: m.Integrations, Traits: m.Traits,
	}, nil
}

func (m *Track) wire() (wireMessage, error) {
	if err := requireIdentity("track", m.UserId, m.AnonymousId); err != nil {
		return wireMessage{}, err
	}
	if m.Event == "" {
		return wireMessage{}, &ValidationError{Type: "track", Field: "Event", Reason: "is required"}
	}
	return wireMessage{
		Type: "track", MessageId: m.MessageId, Timestamp: m.Timestamp, UserId: m.UserId, AnonymousId: m.AnonymousId,
		Context: m.Context, Integrations: m.Integrations, Event: m.Event, Properties: m.Properties,
	}, nil
}

func (m *Page) wire() (wireMessage, error) {
	if err := requireIdentity("page", m.UserId, m.AnonymousId); err != nil {
		return wireMessage{}, err
	}
	return wireMessage{
		Type: "page", MessageId: m.MessageId, Timestamp: m.Timestamp, UserId: m.UserId, AnonymousId: m.AnonymousId,
		Context: m.Context, Integrations: m.Integrations, Properties: mergeMaps(m.Traits, m.Properties),
		Name: m.Name, Category: m.Category,
	}, nil
}

func (m *Screen) wire() (wireMessage, error) {
	if err := requireIdentity("screen", m.UserId, m.AnonymousId); err != nil {
		return wireMessage{}, err
	}
	return wireMessage{
		Type: "screen", MessageId: m.MessageId, Timestamp: m.Timestamp, UserId: m.UserId, AnonymousId: m.AnonymousId,
		Context: m.Context, Integrations: m.Integrations, Properties: m.Properties, Name: m.Name, Category: m.Category,
	}, nil
}

func (m *Group) wire() (wireMessage, error) {
	if err := requireIdentity("group", m.UserId, m.AnonymousId); err != nil {
		return wireMessage{}, err
	}
	if m.GroupId == "" {
		return wireMessage{}, &ValidationError{Type: "group", Field: "GroupId", Reason: "is required"}
	}
	return wireMessage{
		Type: "group", MessageId: m.MessageId, Timestamp: m.Timestamp, UserId: m.UserId, AnonymousId: m.AnonymousId,
		Context: m.Context, Integrations: m.Integrations, GroupId: m.GroupId, Traits: m.Traits,
	}, nil
}

func (m *Alias) wire() (wireMessage, error) {
	if m.UserId == "" {
		return wireMessage{}, &ValidationError{Type: "alias", Field: "UserId", Reason: "is required"}
	}
	if m.PreviousId == "" {
		return wireMessage{}, &ValidationError{Type: "alias", Field: "PreviousId", Reason: "is required"}
	}
	return wireMessage{
		Type: "alias", MessageId: m.MessageId, Timestamp: m.Timestamp, UserId: m.UserId,
		Context: m.Context, Integrations: m.Integrations, PreviousId: m.PreviousId,
	}, nil
}

func requireIdentity(typ, userID, anonymousID string) error {
	if userID == "" && anonymousID == "" {
		return &ValidationError{Type: typ, Field: "UserId or AnonymousId", Reason: "is required"}
	}
	return nil
}

// mergeMaps returns b over a, without copying when one of them is empty.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	merged := make(map[string]interface{}, len(a)+len(b))
	for k, v := range a {
		merged[k] = v
	}
	for k, v := range b {
		merged[k] = v
	}
	return merged
}
