package consumers

import "github.com/svcdev/svc/pkg/events"

// The consumer groups of mailbox-svc.
const (
	HashesGroup         = "hashes"          // Hashes
	AdmissionsGroup     = "admissions"      // Admissions (AdmissionTopics)
	WebhookNoticesGroup = "webhook-notices" // WebhookNotices
)

// HashesTopics are the topics Hashes reads; WebhookNoticesTopics those WebhookNotices reads.
var (
	HashesTopics         = []string{events.TopicIdentity}
	WebhookNoticesTopics = []string{events.TopicWebhook}
)
