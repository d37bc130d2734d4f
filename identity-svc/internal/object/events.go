package object

import (
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Every event identity-svc publishes is built here.

func objectCreated(o *store.Object, requestID string) (events.Pending, error) {
	return events.New(events.TopicIdentity, events.ObjectCreated, o.ID, o.Hash, requestID,
		contract.ObjectCreatedData{Object: InternalView(o)})
}

func hashChanged(objectID, hash, previous, username, requestID string) events.Pending {
	return events.MustNew(events.TopicIdentity, events.ObjectHashChanged, objectID, hash, requestID,
		contract.HashChangedData{Hash: hash, PreviousHash: previous, Username: username})
}

func keyEvent(eventType, objectID, hash, requestID string, d contract.KeyEventData) events.Pending {
	return events.MustNew(events.TopicIdentity, eventType, objectID, hash, requestID, d)
}

func associationCreated(a *store.Association, hash, requestID string) events.Pending {
	return events.MustNew(events.TopicIdentity, events.AssociationCreated, a.ObjectID, hash, requestID, ViewOf(a))
}

// AssociationView is an association as the API and its events show it.
type AssociationView struct {
	ID        string `json:"id"`
	PeerHash  string `json:"peer_hash"`
	Role      string `json:"role"`
	Label     string `json:"label"`
	CreatedAt string `json:"created_at"`
}

// ViewOf returns the view of a.
func ViewOf(a *store.Association) AssociationView {
	return AssociationView{ID: a.ID, PeerHash: a.PeerHash, Role: a.Role, Label: a.Label, CreatedAt: clock.Format(a.CreatedAt)}
}
