package consumers

import "github.com/svcdev/svc/pkg/events"

// The consumer groups of identity-svc, each with the topics it reads.
const (
	ClaimsGroup   = "claims"   // Claims
	ProfilesGroup = "profiles" // Profiles
)

// ClaimsTopics are the topics Claims reads; ProfilesTopics those Profiles reads.
var (
	ClaimsTopics   = []string{events.TopicClaims}
	ProfilesTopics = []string{events.TopicContext}
)
