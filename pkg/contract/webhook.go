package contract

// WebhookNoticeData is the data of a webhook.disabled or webhook.delivery_given_up event (topic
// svc.webhook.v1): what went wrong with a subscription, told to the object that holds it. It
// carries no callback header values and no secrets.
type WebhookNoticeData struct {
	SubscriptionID string `json:"subscription_id"`
	Kind           string `json:"kind"` // webhook or context
	Reason         string `json:"reason"`
	DeliveryID     string `json:"delivery_id,omitempty"`
	EventID        string `json:"event_id,omitempty"`
	Event          string `json:"event,omitempty"`
	Attempts       int    `json:"attempts,omitempty"`
	// Message is the text of the system message.
	Message string `json:"message"`
}
