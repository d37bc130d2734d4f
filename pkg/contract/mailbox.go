package contract

// Participant is one object of a thread: its internal id and its current hash.
type Participant struct {
	ObjectID string `json:"object_id"`
	Hash     string `json:"hash"`
}

// Thread is mailbox-svc's internal view of a thread (GET /internal/v1/threads/{thread_id}), for
// the services that keep data per thread and must check who takes part in it.
type Thread struct {
	ThreadID             string        `json:"thread_id"`
	Participants         []Participant `json:"participants"`
	Status               string        `json:"status"`
	ParticipantAdmission string        `json:"participant_admission"`
	CreatedAt            string        `json:"created_at"`
}

// MessageCreatedData is the data of a message.created event (webhook event "message"). The
// envelope's object is the recipient.
type MessageCreatedData struct {
	MessageID    string `json:"message_id"`
	ThreadID     string `json:"thread_id"`
	FromObjectID string `json:"from_object_id"`
	FromHash     string `json:"from_hash"`
	ToObjectID   string `json:"to_object_id"`
	ToHash       string `json:"to_hash"`
	Kind         string `json:"kind"`
	Body         string `json:"body"`
	CreatedAt    string `json:"created_at"`
	// PrevMessageID is the thread's message this one follows (empty for a thread's first, and in
	// events of older releases), so that projections link replies exactly.
	PrevMessageID string `json:"prev_message_id,omitempty"`
}

// ThreadCreatedData is the data of a thread.created event. The envelope's object is the
// recipient of the thread's first message; participants are listed sender first.
type ThreadCreatedData struct {
	ThreadID             string        `json:"thread_id"`
	Participants         []Participant `json:"participants"`
	ParticipantAdmission string        `json:"participant_admission"`
	CreatedAt            string        `json:"created_at"`
}

// SenderBlockData is the data of sender.blocked and sender.unblocked events. The envelope's
// object is the object that blocks.
type SenderBlockData struct {
	SenderObjectID string `json:"sender_object_id"`
	SenderHash     string `json:"sender_hash"`
	At             string `json:"at"`
	// ControlVersion is the blocker's control version the block or unblock took (pkg/controls):
	// a projection that applied it records it, so that an enforcing service knows it is current.
	// Internal (no public payload carries this event); 0 in events from before it was carried.
	ControlVersion int64 `json:"control_version,omitempty"`
}

// SenderBlocked is mailbox-svc's internal answer whether an object blocks a sender now.
type SenderBlocked struct {
	Blocked bool `json:"blocked"`
}
