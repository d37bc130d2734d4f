package graph

import (
	"context"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// PreloadSources writes tracked sources of the owner's self-ingest thread as Ingest leaves them
// when their first pull failed with pullErr: the self thread, and for each URL its slot of the
// owner's source quota while there is one (a preload writes every source it is given), the
// source, its entry in the thread's sources, its due bucket and the failed pull with the source's
// state. It is for benchmarks that measure reads at a given size: the same code as Ingest's
// writes, without the fetch.
func (s *Service) PreloadSources(ctx context.Context, c *contract.Principal, urls []string, pullErr string) error {
	th, err := s.selfThread(ctx, c)
	if err != nil {
		return err
	}
	srcs := make([]store.Source, 0, len(urls))
	for _, u := range urls {
		src := store.Source{ID: apikey.NewID("src"), ThreadID: th.ID, OwnerID: c.ObjectID, OwnerHash: c.Hash, Kind: KindURL,
			URL: u, FetchURL: u, Visibility: Participants, CreatedAt: clock.Now()}
		srcs = append(srcs, src)
	}
	// Ingest's order: the quota, then each source, its list entry and schedule, then its pull.
	for _, src := range srcs {
		if _, err := s.Store.Reserve(ctx, sourceQuota(c.ObjectID), s.Limits.SourcesPerOwner, src.ID); err != nil {
			return err
		}
	}
	for i := range srcs {
		if err := s.Store.InsertSource(ctx, &srcs[i]); err != nil {
			return err
		}
		if err := s.Store.AppendSource(ctx, &srcs[i]); err != nil {
			return err
		}
		if err := s.schedule(ctx, srcs[i].ID, srcs[i].CreatedAt.Add(s.Schedule.Interval)); err != nil {
			return err
		}
	}
	for _, src := range srcs {
		p := &store.Pull{ID: apikey.NewID("pul"), SourceID: src.ID, At: clock.Now(), Status: StatusError, Error: pullErr}
		if err := s.recordPull(ctx, store.PullSummary{}, p); err != nil {
			return err
		}
	}
	return nil
}
