package mailbox

import (
	"context"
	"errors"
	"slices"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// TaskStore is what a task read needs.
type TaskStore interface {
	Message(ctx context.Context, id string) (*store.Message, error)
	MessagesAfter(ctx context.Context, threadID string, seq int64, limit int) ([]store.Message, error)
}

// Tasks shows a sent message as an A2A task: submitted until the recipient replies in its
// thread, completed with the first reply.
type Tasks struct {
	Store TaskStore
	Names *Names
}

// replyWindow is how many later messages of the thread a task read looks through for the reply.
const replyWindow = 50

// TaskView is a sent message, the box it was sent to, and the recipient's first reply after it
// (nil while there is none), each with the hashes its reader sees.
type TaskView struct {
	Sent   MessageView
	Reply  *MessageView
	Thread string
}

// Task returns message id, sent to box, as viewerID may see it: only the thread's two
// participants may, and a message not sent to the box is not found. A task a viewer may not read
// of a box it may not learn of (contract.Visible) is the unknown object's 404: its participants
// learned of the box by sending to it, anyone else learns nothing.
func (t *Tasks) Task(ctx context.Context, viewerID string, box *contract.Target, id string) (*TaskView, error) {
	notFound := apierr.NotFound("task")
	if !contract.Visible(box.Visibility, box.ObjectID, viewerID) {
		notFound = apierr.NotFound("object")
	}
	m, err := t.Store.Message(ctx, id)
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if m.ToID != box.ObjectID || (viewerID != m.FromID && viewerID != m.ToID) {
		return nil, notFound
	}
	later, err := t.Store.MessagesAfter(ctx, m.ThreadID, m.Seq, replyWindow)
	if err != nil {
		return nil, err
	}
	hashes, err := t.Names.Hashes(ctx, []string{m.FromID, m.ToID})
	if err != nil {
		return nil, err
	}
	out := &TaskView{Sent: messageView(m, hashes), Thread: m.ThreadID}
	if i := slices.IndexFunc(later, func(r store.Message) bool { return r.FromID == m.ToID }); i >= 0 {
		reply := messageView(&later[i], hashes)
		out.Reply = &reply
	}
	return out, nil
}
