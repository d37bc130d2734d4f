package http

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// blockedSenders answers context-svc, which shows an owner its blocked list beside its rules.
func (h *Handler) blockedSenders(c *gin.Context) {
	ctx := c.Request.Context()
	ids, err := h.Store.BlockedSenders(ctx, c.Param("id"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	hashes, err := h.hashes(ctx, ids)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	out := contract.BlockedSenders{BlockedHashes: make([]string, 0, len(ids))}
	for _, id := range ids {
		if hash, ok := hashes[id]; ok {
			out.BlockedHashes = append(out.BlockedHashes, hash)
		}
	}
	c.JSON(http.StatusOK, out)
}

// internalThread tells other services who takes part in a thread.
func (h *Handler) internalThread(c *gin.Context) {
	ctx := c.Request.Context()
	t, err := h.Store.Thread(ctx, c.Param("id"))
	if err != nil {
		httpx.Abort(c, storeError(err, "thread"))
		return
	}
	hashes, err := h.hashes(ctx, t.Participants)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	out := contract.Thread{ThreadID: t.ID, Status: t.Status, ParticipantAdmission: t.Admission, CreatedAt: clock.Format(t.CreatedAt)}
	for _, id := range t.Participants {
		out.Participants = append(out.Participants, contract.Participant{ObjectID: id, Hash: hashes[id]})
	}
	c.JSON(http.StatusOK, out)
}
